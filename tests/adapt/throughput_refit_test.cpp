#include <gtest/gtest.h>

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

TEST(ThroughputRefit, RejectsInvalidTimes) {
  ThroughputRefit refit;
  EXPECT_THROW(refit.observe(PlanFamily{}, 0.0, 1.0), Error);
  EXPECT_THROW(refit.observe(PlanFamily{}, 1.0, -1.0), Error);
  EXPECT_THROW(refit.observe(PlanFamily{}, 1.0, 1.0, 0), Error);
  EXPECT_THROW(ThroughputRefit(0.0), Error);
}

}  // namespace
}  // namespace tessera
