#include "adapt/gradient_noise_scale.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace tessera {

NoiseEstimate unbiased_noise_estimate(double small_sq_norm, double small_batch, double big_sq_norm,
                                      double big_batch) {
  if (!std::isfinite(small_sq_norm) || small_sq_norm < 0.0)
    throw Error("small_sq_norm", "got " + std::to_string(small_sq_norm), "a finite number >= 0");
  if (!std::isfinite(big_sq_norm) || big_sq_norm < 0.0)
    throw Error("big_sq_norm", "got " + std::to_string(big_sq_norm), "a finite number >= 0");
  if (!std::isfinite(small_batch) || small_batch <= 0.0)
    throw Error("small_batch", "got " + std::to_string(small_batch), "a number > 0");
  if (!std::isfinite(big_batch) || big_batch <= small_batch)
    throw Error("big_batch", "got " + std::to_string(big_batch) + " with small_batch " + std::to_string(small_batch),
                "a number greater than small_batch");
  NoiseEstimate e;
  e.gradient_sq_norm = (big_batch * big_sq_norm - small_batch * small_sq_norm) / (big_batch - small_batch);
  e.trace_covariance = (small_sq_norm - big_sq_norm) / (1.0 / small_batch - 1.0 / big_batch);
  return e;
}

GnsEstimator::GnsEstimator(double ema_decay) : decay_(ema_decay) {
  if (!(ema_decay > 0.0 && ema_decay < 1.0))
    throw Error("ema_decay", "got " + std::to_string(ema_decay), "a number in (0, 1)");
}

void GnsEstimator::update(double small_sq_norm, double small_batch, double big_sq_norm, double big_batch,
                          std::int64_t steps) {
  if (steps < 1) throw Error("steps", "got " + std::to_string(steps), "an integer >= 1");
  const NoiseEstimate e = unbiased_noise_estimate(small_sq_norm, small_batch, big_sq_norm, big_batch);
  // `steps` identical updates x of an EMA m <- d m + (1 - d) x collapse to m <- d^s m + (1 - d^s) x.
  const double keep = std::pow(decay_, static_cast<double>(steps));
  sq_norm_sum_ = keep * sq_norm_sum_ + (1.0 - keep) * e.gradient_sq_norm;
  trace_sum_ = keep * trace_sum_ + (1.0 - keep) * e.trace_covariance;
  weight_ = keep * weight_ + (1.0 - keep);
  steps_ += steps;
}

double GnsEstimator::gradient_sq_norm() const { return steps_ == 0 ? 0.0 : sq_norm_sum_ / weight_; }
double GnsEstimator::trace_covariance() const { return steps_ == 0 ? 0.0 : trace_sum_ / weight_; }

double GnsEstimator::noise_scale() const {
  if (!has_noise_scale())
    throw Error("noise_scale", steps_ == 0 ? "no gradient norms observed yet" : "the averaged |G|^2 is not positive yet",
                "more steps");
  return trace_sum_ / sq_norm_sum_;  // the bias corrections cancel
}

}  // namespace tessera
