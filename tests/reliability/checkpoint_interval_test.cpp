#include <gtest/gtest.h>

#include <cmath>
#include <utility>

#include "common/thrown_field.h"
#include "reliability/checkpoint_interval.h"

namespace tessera {
namespace {

// Where Young's and Daly's assumptions hold (delta << M), the exact optimum of Daly's model
// agrees with both within 5% (Daly within 1%: it is the higher-order expansion of the same root).
TEST(CheckpointInterval, ExactOptimumMatchesYoungAndDalyWhenCheckpointsAreCheap) {
  // (delta, M) with delta / M <= 0.002: Young's first-order error ~ sqrt(delta / 2M) / 3 + the
  // delta it does not subtract stays under 5% there.
  const std::pair<double, double> cheap[] = {{1, 3600}, {3, 11'000}, {10, 11'000}, {60, 86'400}, {2, 1e6}};
  for (const auto& [delta_s, mtbf_s] : cheap) {
    ASSERT_LE(delta_s / mtbf_s, 0.002);
    const double exact = optimal_interval_s(delta_s, mtbf_s);
    EXPECT_NEAR(exact / young_interval_s(delta_s, mtbf_s), 1.0, 0.05) << delta_s << " " << mtbf_s;
    EXPECT_NEAR(exact / daly_interval_s(delta_s, mtbf_s), 1.0, 0.01) << delta_s << " " << mtbf_s;
  }
  // Where delta is a sizeable share of M, Young drifts away and Daly's higher order keeps up.
  const double exact = optimal_interval_s(600, 3600);
  EXPECT_GT(young_interval_s(600, 3600) / exact, 1.2);
  EXPECT_NEAR(daly_interval_s(600, 3600) / exact, 1.0, 0.05);
}

// The optimum is a maximum of the useful fraction: 1% either side is worse; and it does not
// depend on the restart time (R only scales the fraction by e^{-R/M}).
TEST(CheckpointInterval, OptimumMaximisesTheUsefulFraction) {
  const double delta = 30, mtbf = 7200;
  const double tau = optimal_interval_s(delta, mtbf);
  for (const double restart : {0.0, 600.0}) {
    const double best = useful_fraction(tau, delta, restart, mtbf);
    EXPECT_GT(best, useful_fraction(tau * 0.99, delta, restart, mtbf));
    EXPECT_GT(best, useful_fraction(tau * 1.01, delta, restart, mtbf));
  }
  EXPECT_NEAR(useful_fraction(tau, delta, 600, mtbf) / useful_fraction(tau, delta, 0, mtbf), std::exp(-600.0 / mtbf),
              1e-12);
}

// Closed forms: with no failures in sight (M -> inf) the fraction is tau / (tau + delta); the
// first-order loss at Young's interval is sqrt(2 delta / M) + R / M.
TEST(CheckpointInterval, UsefulFractionLimits) {
  EXPECT_NEAR(useful_fraction(100, 10, 0, 1e9), 100.0 / 110.0, 1e-7);  // + O((tau + delta) / M)
  const double delta = 5, mtbf = 1e6, restart = 100;
  const double tau = young_interval_s(delta, mtbf);
  const double first_order = 1.0 - std::sqrt(2 * delta / mtbf) - restart / mtbf;
  EXPECT_NEAR(useful_fraction(tau, delta, restart, mtbf), first_order, 1e-4);
}

// Goodput falls as failures come more often and as checkpoints take longer (each at its own
// optimal interval).
TEST(CheckpointInterval, FractionFallsWithShorterMtbfAndLongerCheckpoints) {
  double previous = 1.0;
  for (const double mtbf : {1e6, 1e5, 3e4, 1e4, 3e3, 1e3}) {
    const double tau = optimal_interval_s(20, mtbf);
    const double f = useful_fraction(tau, 20, 300, mtbf);
    EXPECT_LT(f, previous) << mtbf;
    previous = f;
  }
  previous = 1.0;
  for (const double delta : {0.5, 2.0, 10.0, 60.0, 300.0, 1800.0}) {
    const double f = useful_fraction(optimal_interval_s(delta, 11'000), delta, 300, 11'000);
    EXPECT_LT(f, previous) << delta;
    previous = f;
  }
}

// Daly's expression is valid only below delta = 2M; beyond it his recommendation is tau = M.
TEST(CheckpointInterval, DalyCapsAtTheMtbf) {
  EXPECT_DOUBLE_EQ(daly_interval_s(3000, 1000), 1000);
  EXPECT_GT(daly_interval_s(1999, 1000), 0);
}

TEST(CheckpointInterval, BadTimesNameTheField) {
  using testing::thrown_field;
  EXPECT_EQ(thrown_field([] { young_interval_s(-1, 100); }), "checkpoint_s");
  EXPECT_EQ(thrown_field([] { optimal_interval_s(1, 0); }), "mtbf_s");
  EXPECT_EQ(thrown_field([] { useful_fraction(std::nan(""), 1, 1, 100); }), "interval_s");
  EXPECT_EQ(thrown_field([] { useful_fraction(10, 1, -1, 100); }), "restart_s");
}

}  // namespace
}  // namespace tessera
