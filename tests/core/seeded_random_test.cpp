// SeededRandom: the moments of its distributions (within 5 standard errors over 200,000 draws),
// determinism per seed, and shuffles that are permutations.
#include "core/seeded_random.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

namespace tessera {
namespace {

constexpr int kDraws = 200'000;
constexpr double kStandardErrors = 5.0;

TEST(SeededRandom, UniformHasTheMeanAndVarianceOfU01) {
  SeededRandom r(7);
  double sum = 0, sum_sq = 0, lo = 1, hi = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double u = r.uniform();
    sum += u;
    sum_sq += u * u;
    lo = std::min(lo, u);
    hi = std::max(hi, u);
  }
  const double mean = sum / kDraws, var = sum_sq / kDraws - mean * mean;
  EXPECT_NEAR(mean, 0.5, kStandardErrors * std::sqrt(1.0 / 12.0 / kDraws));
  EXPECT_NEAR(var, 1.0 / 12.0, 0.002);
  EXPECT_GE(lo, 0.0);
  EXPECT_LT(hi, 1.0);
}

TEST(SeededRandom, NormalIsStandardAndLognormalHasItsMedian) {
  SeededRandom r(11);
  double sum = 0, sum_sq = 0;
  int below_one_sigma = 0;
  for (int i = 0; i < kDraws; ++i) {
    const double z = r.normal();
    sum += z;
    sum_sq += z * z;
    below_one_sigma += std::fabs(z) < 1.0;
  }
  EXPECT_NEAR(sum / kDraws, 0.0, kStandardErrors / std::sqrt(kDraws));
  EXPECT_NEAR(sum_sq / kDraws, 1.0, 0.02);
  EXPECT_NEAR(static_cast<double>(below_one_sigma) / kDraws, 0.6827, 0.005);  // 68-95-99.7 rule

  std::vector<double> x(kDraws);
  for (double& v : x) v = r.lognormal(1500.0, 1.2);
  std::nth_element(x.begin(), x.begin() + kDraws / 2, x.end());
  EXPECT_NEAR(x[kDraws / 2] / 1500.0, 1.0, 0.02);
}

TEST(SeededRandom, SameSeedSameStreamOtherSeedOtherStream) {
  SeededRandom a(3), b(3), c(4);
  int differ = 0;
  for (int i = 0; i < 1000; ++i) {
    const double x = a.uniform();
    EXPECT_EQ(x, b.uniform());
    differ += x != c.uniform();
  }
  EXPECT_GT(differ, 990);
}

TEST(SeededRandom, ShuffleIsAPermutationAndMovesThings) {
  std::vector<int> v(1000);
  std::iota(v.begin(), v.end(), 0);
  SeededRandom r(5);
  r.shuffle(std::span<int>(v));
  int fixed = 0;
  for (int i = 0; i < 1000; ++i) fixed += v[static_cast<std::size_t>(i)] == i;
  EXPECT_LT(fixed, 10);  // a random permutation has 1 fixed point on average
  std::sort(v.begin(), v.end());
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(v[static_cast<std::size_t>(i)], i);
  for (int i = 0; i < 1000; ++i) EXPECT_LT(r.below(7), 7u);
}

}  // namespace
}  // namespace tessera
