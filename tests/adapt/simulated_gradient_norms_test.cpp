// The sampled norms have the means McCandlish et al.'s estimators rely on, so the estimators
// recover |G|^2 and tr(Sigma) from them; averaging over steps shrinks the scatter.
#include <gtest/gtest.h>

#include <cmath>

#include "adapt/gradient_noise_scale.h"
#include "adapt/simulated_gradient_norms.h"
#include "core/error.h"

namespace tessera {
namespace {

TEST(SimulatedGradientNorms, MeansAreGradientPlusNoiseOverBatch) {
  std::mt19937_64 rng(3);
  const double g2 = 2.0, trace = 500.0, d = 200.0;
  constexpr int kDraws = 4000;
  double small = 0, big = 0;
  for (int i = 0; i < kDraws; ++i) {
    const MeasuredSquaredNorms m = sample_squared_norms(rng, g2, trace, d, 4, 64, 1);
    small += m.small_sq_norm / kDraws;
    big += m.big_sq_norm / kDraws;
  }
  EXPECT_NEAR(small / (g2 + trace / 4.0), 1.0, 0.01);
  EXPECT_NEAR(big / (g2 + trace / 64.0), 1.0, 0.02);
  const NoiseEstimate e = unbiased_noise_estimate(small, 4, big, 64);
  EXPECT_NEAR(e.gradient_sq_norm / g2, 1.0, 0.1);
  EXPECT_NEAR(e.trace_covariance / trace, 1.0, 0.02);
}

TEST(SimulatedGradientNorms, AveragingStepsShrinksTheScatter) {
  auto scatter = [](std::int64_t steps) {
    std::mt19937_64 rng(9);
    double sum = 0, sum_sq = 0;
    constexpr int kDraws = 2000;
    for (int i = 0; i < kDraws; ++i) {
      const double x = sample_squared_norms(rng, 1.0, 100.0, 50.0, 2, 16, steps).big_sq_norm;
      sum += x;
      sum_sq += x * x;
    }
    const double mean = sum / kDraws;
    return std::sqrt(sum_sq / kDraws - mean * mean);
  };
  EXPECT_NEAR(scatter(1) / scatter(100), 10.0, 1.0);  // 1 / sqrt(steps)
  std::mt19937_64 rng(1);
  EXPECT_THROW(sample_squared_norms(rng, 1.0, 1.0, 10.0, 3, 16, 1), Error);  // 16 not a multiple of 3
  EXPECT_THROW(sample_squared_norms(rng, 1.0, 1.0, 10.0, 16, 16, 1), Error);
}

}  // namespace
}  // namespace tessera
