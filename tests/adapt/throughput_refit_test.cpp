#include <gtest/gtest.h>

#include <cmath>

#include "adapt/throughput_refit.h"
#include "core/error.h"

namespace tessera {
namespace {

TEST(ThroughputRefit, LearnsEachFamilysRatioAndLeavesOthersAtTheModel) {
  ThroughputRefit refit(0.9);
  PlanFamily slow, fast;
  slow.zero = OptimizerSharding::zero3;
  fast.tp = 2;
  EXPECT_EQ(refit.scale(slow), 1.0);
  EXPECT_FALSE(refit.observed(slow));
  refit.observe(slow, 1.2, 1.0);
  EXPECT_NEAR(refit.scale(slow), 1.2, 1e-12);  // bias-corrected: one observation is the estimate
  for (int i = 0; i < 200; ++i) refit.observe(slow, 1.18 * 2.0, 2.0);
  EXPECT_NEAR(refit.scale(slow), 1.18, 1e-3);
  EXPECT_TRUE(refit.observed(slow));
  EXPECT_EQ(refit.scale(fast), 1.0);
  // A window of steps counts as that many steps.
  ThroughputRefit a(0.9), b(0.9);
  a.observe(fast, 1.0, 1.0);
  b.observe(fast, 1.0, 1.0);
  a.observe(fast, 2.0, 1.0, 5);
  for (int i = 0; i < 5; ++i) b.observe(fast, 2.0, 1.0);
  EXPECT_NEAR(a.scale(fast), b.scale(fast), 1e-12);
}

// Predictions that grow by 1 / factor leave measured / predicted = ratio x factor; the weight of
// the steps behind it stays, so later steps move it as much as before.
TEST(ThroughputRefit, RescaleMovesTheRatioOntoNewPredictions) {
  ThroughputRefit moved(0.9), direct(0.9);
  PlanFamily family, never;
  never.pp = 2;
  moved.observe(family, 1.5, 1.0, 3);
  direct.observe(family, 1.5, 1.0 / 0.8, 3);  // the same steps against predictions 1 / 0.8 as long
  moved.rescale(family, 0.8);
  EXPECT_NEAR(moved.scale(family), 1.5 * 0.8, 1e-12);
  EXPECT_NEAR(moved.scale(family), direct.scale(family), 1e-12);
  moved.observe(family, 2.0, 1.0, 2);
  direct.observe(family, 2.0, 1.0, 2);
  EXPECT_NEAR(moved.scale(family), direct.scale(family), 1e-12);
  moved.rescale(never, 2.0);
  EXPECT_EQ(moved.scale(never), 1.0);
  EXPECT_FALSE(moved.observed(never));
  EXPECT_THROW(moved.rescale(family, 0.0), Error);
  EXPECT_THROW(moved.rescale(family, std::nan("")), Error);
}

TEST(ThroughputRefit, RejectsInvalidTimes) {
  ThroughputRefit refit;
  EXPECT_THROW(refit.observe(PlanFamily{}, 0.0, 1.0), Error);
  EXPECT_THROW(refit.observe(PlanFamily{}, 1.0, -1.0), Error);
  EXPECT_THROW(refit.observe(PlanFamily{}, 1.0, 1.0, 0), Error);
  EXPECT_THROW(ThroughputRefit(0.0), Error);
}

}  // namespace
}  // namespace tessera
