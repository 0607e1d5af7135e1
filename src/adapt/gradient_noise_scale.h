// Gradient noise scale: McCandlish et al. 2018, "An Empirical Model of Large-Batch Training"
// (arXiv 1812.06162). From the squared norm of the gradient averaged over a small batch and over
// the big batch that contains it, appendix A.1's unbiased estimators of the true gradient's squared
// norm |G|^2 and of the per-example noise tr(Sigma); their ratio is the "simple" noise scale
// B_simple = tr(Sigma) / |G|^2 (section 2.2), in the units of the batch sizes given (sequences).
//
// One step's estimates are noisy, so the estimator smooths numerator and denominator separately
// with an exponential moving average (bias-corrected as Adam does: Kingma & Ba 2015, section 3)
// and divides the averages (McCandlish et al., appendix A.1: averaging the ratio would be biased).
#pragma once

#include <cstdint>

namespace tessera {

// Per-step decay of the moving averages: a time constant of 1,000 steps. One step's |G|^2 estimate
// scatters by about (B_noise / B) sqrt(2 / d) for d effective noise directions, several times its
// value when B << B_noise, so it takes ~1,000 steps to average it to ~10% (McCandlish et al.
// appendix A.1 average over many batches); the noise scale itself drifts over many thousands.
inline constexpr double kGnsEmaDecay = 0.999;

// One step's unbiased estimates.
struct NoiseEstimate {
  double gradient_sq_norm = 0;  // |G|^2
  double trace_covariance = 0;  // tr(Sigma), per example
};

// McCandlish et al. appendix A.1: with E|G_B|^2 = |G|^2 + tr(Sigma)/B,
//   |G|^2    = (B_big |G_big|^2 - B_small |G_small|^2) / (B_big - B_small)
//   tr Sigma = (|G_small|^2 - |G_big|^2) / (1/B_small - 1/B_big).
// small_sq_norm: |G_small|^2, the squared norm of a small-batch gradient (or the mean of several
// small batches' squared norms, which keeps both estimators unbiased). Throws Error unless
// 0 < small_batch < big_batch and both norms are finite and non-negative.
NoiseEstimate unbiased_noise_estimate(double small_sq_norm, double small_batch, double big_sq_norm,
                                      double big_batch);

class GnsEstimator {
 public:
  explicit GnsEstimator(double ema_decay = kGnsEmaDecay);  // decay in (0, 1)

  // One observation. `steps` > 1 says the norms are averages over that many consecutive steps at
  // the same batch sizes (the estimators are linear in the norms, so the average's estimate is the
  // average of the steps' estimates); it then counts as that many steps in the averages.
  void update(double small_sq_norm, double small_batch, double big_sq_norm, double big_batch,
              std::int64_t steps = 1);

  std::int64_t steps() const { return steps_; }
  // Bias-corrected moving averages (0 before the first update).
  double gradient_sq_norm() const;
  double trace_covariance() const;
  // A noise scale exists once a step was seen and the averaged |G|^2 is positive (early, noisy
  // estimates of |G|^2 can be negative when the gradient is mostly noise).
  bool has_noise_scale() const { return steps_ > 0 && gradient_sq_norm() > 0.0; }
  // B_simple = EMA[tr Sigma] / EMA[|G|^2], in the batch sizes' units; throws Error without one.
  double noise_scale() const;

 private:
  double decay_;
  double sq_norm_sum_ = 0;  // sum of weighted |G|^2 estimates (uncorrected EMA)
  double trace_sum_ = 0;    // sum of weighted tr(Sigma) estimates
  double weight_ = 0;       // 1 - decay^steps: the weight the EMA has gathered (Adam's correction)
  std::int64_t steps_ = 0;
};

}  // namespace tessera
