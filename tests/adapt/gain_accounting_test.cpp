// Where coadaptive's gain over fixed comes from: the parts add up to the total by construction, the
// fractions are of fixed's time, and a gain below kWorthwhileGainFraction is not worth a restart.
#include "adapt/gain_accounting.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

RunSimulation with_times(double fixed_s, double batch_only_s, double plan_only_s, double coadaptive_s,
                         double optimum_s) {
  RunSimulation sim;
  sim.policies[static_cast<std::size_t>(Policy::fixed)].time_to_target_s = fixed_s;
  sim.policies[static_cast<std::size_t>(Policy::batch_only)].time_to_target_s = batch_only_s;
  sim.policies[static_cast<std::size_t>(Policy::plan_only)].time_to_target_s = plan_only_s;
  sim.policies[static_cast<std::size_t>(Policy::coadaptive)].time_to_target_s = coadaptive_s;
  sim.offline_optimum.time_to_target_s = optimum_s;
  return sim;
}

TEST(GainAccounting, PartsSumToTheTotal) {
  const GainAccounting g = gain_accounting(with_times(1000, 970, 990, 950, 940));
  EXPECT_DOUBLE_EQ(g.total_s, 50);
  EXPECT_DOUBLE_EQ(g.from_batch_s, 30);
  EXPECT_DOUBLE_EQ(g.from_plan_s, 20);
  EXPECT_DOUBLE_EQ(g.from_batch_s + g.from_plan_s, g.total_s);
  EXPECT_DOUBLE_EQ(g.optimum_s, 60);
  EXPECT_DOUBLE_EQ(g.total_fraction(), 0.05);
  EXPECT_DOUBLE_EQ(g.from_batch_fraction() + g.from_plan_fraction(), g.total_fraction());
  EXPECT_TRUE(g.worthwhile());
}

// A policy that loses while it learns gives a negative part; the sum still holds.
TEST(GainAccounting, NegativePartsAndTheWorthwhileThreshold) {
  const GainAccounting g = gain_accounting(with_times(1000, 1004, 1000, 995, 990));
  EXPECT_DOUBLE_EQ(g.from_batch_s, -4);
  EXPECT_DOUBLE_EQ(g.from_plan_s, 9);
  EXPECT_DOUBLE_EQ(g.from_batch_s + g.from_plan_s, g.total_s);
  EXPECT_FALSE(g.worthwhile());  // 0.5% < 1%
  EXPECT_TRUE(gain_accounting(with_times(1000, 1000, 1000, 1000 * (1 - kWorthwhileGainFraction), 980)).worthwhile());
}

TEST(GainAccounting, RunChangesListEachSwitchInOrder) {
  PolicyRun run;
  run.segments = {{0.0, 3}, {1e9, 5}, {4e9, 2}};
  const std::vector<RunChange> changes = run_changes(run);
  ASSERT_EQ(changes.size(), 2u);
  EXPECT_EQ(changes[0].consumed_tokens, 1e9);
  EXPECT_EQ(changes[0].from, 3u);
  EXPECT_EQ(changes[0].to, 5u);
  EXPECT_EQ(changes[1].from, 5u);
  EXPECT_EQ(changes[1].to, 2u);
  run.segments.resize(1);
  EXPECT_TRUE(run_changes(run).empty());
}

}  // namespace
}  // namespace tessera
