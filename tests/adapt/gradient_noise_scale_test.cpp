// The noise-scale estimators against gradients whose true |G|^2 and tr(Sigma) are known, and the
// estimated B_simple against the critical batch measured by running SGD on a noisy quadratic.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "adapt/gradient_noise_scale.h"
#include "core/error.h"

namespace tessera {
namespace {

using Vector = std::vector<double>;

double squared_norm(const Vector& v) { return std::inner_product(v.begin(), v.end(), v.begin(), 0.0); }

// Per-example gradients G + xi, xi ~ N(0, diag(variances)).
struct SyntheticGradients {
  Vector mean;       // G
  Vector variances;  // diagonal of Sigma
  double true_sq_norm() const { return squared_norm(mean); }
  double true_trace() const { return std::accumulate(variances.begin(), variances.end(), 0.0); }
};

SyntheticGradients anisotropic_gradients(std::size_t dims, double trace) {
  SyntheticGradients g;
  for (std::size_t i = 0; i < dims; ++i) {
    g.mean.push_back(std::sin(1.0 + static_cast<double>(i)));  // any direction
    g.variances.push_back(0.5 + static_cast<double>(i) / static_cast<double>(dims));  // uneven noise
  }
  const double norm = std::sqrt(squared_norm(g.mean));
  for (double& x : g.mean) x /= norm;  // |G|^2 = 1
  const double t = std::accumulate(g.variances.begin(), g.variances.end(), 0.0);
  for (double& v : g.variances) v *= trace / t;
  return g;
}

// One step: `micro_batches` micro-batches of `micro_batch` examples; returns the mean over
// micro-batches of |micro-batch mean|^2 and |batch mean|^2.
std::pair<double, double> measured_norms(const SyntheticGradients& g, std::int64_t micro_batch,
                                         std::int64_t micro_batches, std::mt19937_64& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  const std::size_t d = g.mean.size();
  Vector big(d, 0.0);
  double small_sum = 0;
  for (std::int64_t m = 0; m < micro_batches; ++m) {
    Vector small(d, 0.0);
    for (std::int64_t e = 0; e < micro_batch; ++e)
      for (std::size_t i = 0; i < d; ++i) small[i] += g.mean[i] + std::sqrt(g.variances[i]) * normal(rng);
    for (std::size_t i = 0; i < d; ++i) {
      big[i] += small[i];
      small[i] /= static_cast<double>(micro_batch);
    }
    small_sum += squared_norm(small);
  }
  for (double& x : big) x /= static_cast<double>(micro_batch * micro_batches);
  return {small_sum / static_cast<double>(micro_batches), squared_norm(big)};
}

// McCandlish et al. appendix A.1: each estimator's mean over 1,000 independent steps is within 5%
// of the truth, while the naive plug-in |G_big|^2 misses |G|^2 by tr(Sigma) / B (50% here), which
// shows the test can tell an unbiased estimator from a biased one.
TEST(GradientNoiseScale, EstimatorsAreUnbiasedOverOneThousandTrials) {
  constexpr int kTrials = 1000;
  constexpr std::int64_t kMicroBatch = 4, kMicroBatches = 16, kBig = kMicroBatch * kMicroBatches;
  const SyntheticGradients g = anisotropic_gradients(48, 32.0);  // B_simple = 32 = half the batch
  std::mt19937_64 rng(7);
  double sq_norm_sum = 0, trace_sum = 0, naive_sum = 0;
  for (int t = 0; t < kTrials; ++t) {
    const auto [small, big] = measured_norms(g, kMicroBatch, kMicroBatches, rng);
    const NoiseEstimate e = unbiased_noise_estimate(small, kMicroBatch, big, kBig);
    sq_norm_sum += e.gradient_sq_norm;
    trace_sum += e.trace_covariance;
    naive_sum += big;
  }
  const double sq_norm_mean = sq_norm_sum / kTrials, trace_mean = trace_sum / kTrials;
  EXPECT_NEAR(sq_norm_mean / g.true_sq_norm(), 1.0, 0.05) << sq_norm_mean;
  EXPECT_NEAR(trace_mean / g.true_trace(), 1.0, 0.05) << trace_mean;
  EXPECT_GT(naive_sum / kTrials / g.true_sq_norm() - 1.0, 0.05);
  RecordProperty("sq_norm_bias_pct", std::to_string(100.0 * (sq_norm_mean / g.true_sq_norm() - 1.0)));
  RecordProperty("trace_bias_pct", std::to_string(100.0 * (trace_mean / g.true_trace() - 1.0)));
}

// With exact expected norms (|G|^2 + tr(Sigma) / B) the estimators return |G|^2 and tr(Sigma).
TEST(GradientNoiseScale, ExactNormsGiveExactEstimates) {
  const double g2 = 2.5, trace = 400.0;
  const NoiseEstimate e = unbiased_noise_estimate(g2 + trace / 8.0, 8.0, g2 + trace / 512.0, 512.0);
  EXPECT_NEAR(e.gradient_sq_norm, g2, 1e-12);
  EXPECT_NEAR(e.trace_covariance, trace, 1e-9);
}

// The moving averages are bias-corrected: one update returns that update's estimates; a ratio of
// averages, not an average of ratios.
TEST(GradientNoiseScale, MovingAveragesAreBiasCorrectedAndSmoothedSeparately) {
  GnsEstimator gns(0.9);
  EXPECT_FALSE(gns.has_noise_scale());
  EXPECT_THROW(gns.noise_scale(), Error);
  gns.update(1.0 + 100.0 / 4.0, 4.0, 1.0 + 100.0 / 64.0, 64.0);
  EXPECT_NEAR(gns.gradient_sq_norm(), 1.0, 1e-12);
  EXPECT_NEAR(gns.trace_covariance(), 100.0, 1e-9);
  EXPECT_NEAR(gns.noise_scale(), 100.0, 1e-9);
  // A second step with |G|^2 = 3, tr = 100: weights 0.1 / 0.19 and 0.09 / 0.19 after correction.
  gns.update(3.0 + 100.0 / 4.0, 4.0, 3.0 + 100.0 / 64.0, 64.0);
  const double g2 = (0.09 * 1.0 + 0.1 * 3.0) / 0.19;
  EXPECT_NEAR(gns.gradient_sq_norm(), g2, 1e-9);
  EXPECT_NEAR(gns.noise_scale(), 100.0 / g2, 1e-9);  // not the mean of 100 and 33.3
  // Averaged norms over `steps` steps count as that many identical updates.
  GnsEstimator a(0.9), b(0.9);
  a.update(30.0, 4.0, 5.0, 64.0, 3);
  for (int i = 0; i < 3; ++i) b.update(30.0, 4.0, 5.0, 64.0);
  EXPECT_NEAR(a.noise_scale(), b.noise_scale(), 1e-12);
  EXPECT_EQ(a.steps(), 3);
}

TEST(GradientNoiseScale, RejectsInvalidInputWithTheFieldName) {
  EXPECT_THROW(unbiased_noise_estimate(1.0, 8.0, 1.0, 8.0), Error);    // big batch not bigger
  EXPECT_THROW(unbiased_noise_estimate(-1.0, 4.0, 1.0, 8.0), Error);   // negative norm
  EXPECT_THROW(unbiased_noise_estimate(NAN, 4.0, 1.0, 8.0), Error);
  EXPECT_THROW(GnsEstimator(1.0), Error);
  try {
    unbiased_noise_estimate(1.0, 0.0, 1.0, 8.0);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "small_batch");
  }
}

// ---------------------------------------------------------------------------------------------
// Noisy quadratic: loss 1/2 theta^T H theta, per-example gradient H theta + xi with
// xi ~ N(0, s I), s = B_target |H theta|^2 / d, so B_simple = tr(Sigma) / |G|^2 = B_target at every
// point of training. SGD with its learning rate tuned per batch size (a grid, fewest steps wins)
// runs to a target loss at batch sizes from B_target / 4 to 4 B_target; McCandlish et al.'s model
// S = S_min (1 + B_crit / B) is fitted to the measured steps (least squares of S on 1 / B), and its
// critical batch E_min / S_min is compared with B_simple as GnsEstimator measures it along a run.

struct NoisyQuadratic {
  Vector curvature;  // diagonal of H
  double noise_scale = 0;
  double loss(const Vector& theta) const {
    double l = 0;
    for (std::size_t i = 0; i < theta.size(); ++i) l += 0.5 * curvature[i] * theta[i] * theta[i];
    return l;
  }
  Vector gradient(const Vector& theta) const {
    Vector g(theta.size());
    for (std::size_t i = 0; i < theta.size(); ++i) g[i] = curvature[i] * theta[i];
    return g;
  }
  // Standard deviation per direction of the mean of `batch` examples' gradient noise.
  double noise_sd(const Vector& g, double batch) const {
    return std::sqrt(noise_scale * squared_norm(g) / static_cast<double>(g.size()) / batch);
  }
};

constexpr std::size_t kQuadraticDims = 32;
constexpr double kConditionNumber = 10.0;
constexpr double kQuadraticNoiseScale = 64.0;
constexpr double kLossReduction = 1e3;
constexpr int kSeeds = 6;
constexpr int kMaxSteps = 20000;

NoisyQuadratic make_quadratic() {
  NoisyQuadratic q;
  for (std::size_t i = 0; i < kQuadraticDims; ++i)
    q.curvature.push_back(std::pow(kConditionNumber, static_cast<double>(i) / (kQuadraticDims - 1)));
  q.noise_scale = kQuadraticNoiseScale;
  return q;
}

Vector start_point() { return Vector(kQuadraticDims, 1.0); }

// Mean steps to reach the target loss over kSeeds runs (kMaxSteps when a run does not get there).
double mean_steps_to_target(const NoisyQuadratic& q, double batch, double learning_rate) {
  const double target = q.loss(start_point()) / kLossReduction;
  double total = 0;
  for (int seed = 0; seed < kSeeds; ++seed) {
    std::mt19937_64 rng(1000 + seed);
    std::normal_distribution<double> normal(0.0, 1.0);
    Vector theta = start_point();
    int steps = 0;
    while (q.loss(theta) > target && steps < kMaxSteps) {
      const Vector g = q.gradient(theta);
      const double sd = q.noise_sd(g, batch);
      for (std::size_t i = 0; i < theta.size(); ++i) theta[i] -= learning_rate * (g[i] + sd * normal(rng));
      ++steps;
    }
    total += steps;
  }
  return total / kSeeds;
}

double tuned_steps_to_target(const NoisyQuadratic& q, double batch) {
  const double max_rate = 2.0 / q.curvature.back();  // beyond it GD diverges
  double best = kMaxSteps;
  constexpr int kRates = 24;
  for (int k = 0; k < kRates; ++k) {
    const double rate = max_rate * std::pow(0.01, static_cast<double>(k) / (kRates - 1));
    best = std::min(best, mean_steps_to_target(q, batch, rate));
  }
  return best;
}

// B_simple as GnsEstimator measures it during an SGD run at B = B_target, the batch split into
// micro-batches of 8: every kMeasureEvery steps it reads kDrawsPerPoint steps' worth of norms at the
// current parameters. (Taking the norms of the updating steps alone would let the first few steps,
// whose |G|^2 dwarfs the rest on a quadratic, dominate the averages.)
double measured_noise_scale(const NoisyQuadratic& q) {
  constexpr std::int64_t kMicro = 8, kMicroBatches = 8;
  constexpr int kMeasureEvery = 10, kDrawsPerPoint = 50;
  const double batch = kMicro * kMicroBatches;
  GnsEstimator gns;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> normal(0.0, 1.0);
  Vector theta = start_point();
  const double rate = 0.5 / q.curvature.back();
  const double target = q.loss(start_point()) / kLossReduction;
  auto draw = [&](const Vector& g, Vector& big) {
    const double sd = q.noise_sd(g, kMicro);  // per micro-batch
    big.assign(g.size(), 0.0);
    double small_sum = 0;
    for (std::int64_t m = 0; m < kMicroBatches; ++m) {
      Vector small(g.size());
      for (std::size_t i = 0; i < g.size(); ++i) {
        small[i] = g[i] + sd * normal(rng);
        big[i] += small[i] / kMicroBatches;
      }
      small_sum += squared_norm(small);
    }
    return small_sum / kMicroBatches;
  };
  Vector big;
  for (int step = 0; step < kMaxSteps && q.loss(theta) > target; ++step) {
    const Vector g = q.gradient(theta);
    if (step % kMeasureEvery == 0)
      for (int k = 0; k < kDrawsPerPoint; ++k) {
        const double small = draw(g, big);
        gns.update(small, kMicro, squared_norm(big), batch);
      }
    draw(g, big);
    for (std::size_t i = 0; i < theta.size(); ++i) theta[i] -= rate * big[i];
  }
  return gns.noise_scale();
}

TEST(GradientNoiseScale, NoisyQuadraticCriticalBatchIsWithinTwiceTheEstimatedNoiseScale) {
  const NoisyQuadratic q = make_quadratic();
  const double batches[] = {kQuadraticNoiseScale / 4, kQuadraticNoiseScale / 2, kQuadraticNoiseScale,
                            kQuadraticNoiseScale * 2, kQuadraticNoiseScale * 4};
  // Least squares of S = S_min + E_min * (1 / B).
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  std::vector<double> steps;
  for (double b : batches) {
    const double s = tuned_steps_to_target(q, b);
    steps.push_back(s);
    const double x = 1.0 / b;
    sx += x;
    sy += s;
    sxx += x * x;
    sxy += x * s;
  }
  const double n = std::size(batches);
  const double e_min = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  const double s_min = (sy - e_min * sx) / n;
  // More examples at a bigger batch, fewer steps: the trade-off the fit describes.
  for (std::size_t i = 1; i < steps.size(); ++i) EXPECT_LT(steps[i], steps[i - 1]);
  ASSERT_GT(s_min, 0.0);
  ASSERT_GT(e_min, 0.0);
  const double critical_batch = e_min / s_min;
  const double b_simple = measured_noise_scale(q);
  EXPECT_NEAR(b_simple / kQuadraticNoiseScale, 1.0, 0.1);  // the estimator finds the built-in value
  const double ratio = critical_batch / b_simple;
  EXPECT_GT(ratio, 0.5) << "critical batch " << critical_batch << " vs B_simple " << b_simple;
  EXPECT_LT(ratio, 2.0) << "critical batch " << critical_batch << " vs B_simple " << b_simple;
  RecordProperty("critical_batch", std::to_string(critical_batch));
  RecordProperty("b_simple", std::to_string(b_simple));
}

}  // namespace
}  // namespace tessera
