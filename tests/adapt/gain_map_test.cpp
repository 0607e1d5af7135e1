// The co-adaptation gain map: one cell per model x GPU count in order, each the same simulation
// `adapt simulate` runs on the default scenario for that GPU count, a model that fits nowhere is a
// cell without a gain (not an error), and bad lists name their flag.
#include "adapt/gain_map.h"

#include <gtest/gtest.h>

#include "adapt/noise_scale_scenario.h"
#include "adapt/training_run_simulator.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "common/thrown_field.h"
#include "hardware/cluster.h"

namespace tessera {
namespace {

using testing::thrown_field;

TEST(GainMap, EachCellIsTheSimulationOfItsDefaultScenario) {
  const ModelSpec small = builtin_model("llama3-8b");
  const ModelSpec huge = builtin_model("llama3.1-405b");
  const GpuSpec& gpu = find_gpu("h100-sxm-80gb");
  const std::vector<GainMapCell> cells = gain_map({small, huge}, gpu, {8, 16}, "plateau");
  ASSERT_EQ(cells.size(), 4u);
  EXPECT_EQ(cells[0].model, "llama3-8b");
  EXPECT_EQ(cells[1].gpus, 16);
  EXPECT_EQ(cells[2].model, "llama3.1-405b");
  for (const GainMapCell& c : cells) EXPECT_EQ(c.scenario, "plateau");
  for (std::size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(cells[i].fits);
    const RunSimulation sim =
        simulate_training_run(small, make_cluster(gpu, cells[i].gpus), builtin_scenario("plateau", small));
    const GainAccounting g = gain_accounting(sim);
    EXPECT_DOUBLE_EQ(cells[i].gain.total_s, g.total_s);
    EXPECT_DOUBLE_EQ(cells[i].gain.from_batch_s, g.from_batch_s);
    EXPECT_EQ(cells[i].plan_changes, sim.of(Policy::coadaptive).plan_changes);
    EXPECT_EQ(cells[i].batch_changes, sim.of(Policy::coadaptive).batch_changes);
    // A constant noise scale: nothing to adapt to, so nothing worth a restart.
    EXPECT_FALSE(cells[i].gain.worthwhile());
  }
  // 405B parameters need ~6.5 TB of weights, gradients and optimizer state: not on 16 GPUs.
  EXPECT_FALSE(cells[2].fits);
  EXPECT_FALSE(cells[3].fits);
}

TEST(GainMap, TheDefaultScenarioFollowsTheClusterSize) {
  EXPECT_STREQ(default_scenario_name(kDefaultGainMapGpus[0]), "pretrain");
  EXPECT_STREQ(default_scenario_name(kDefaultGainMapGpus[1]), "cbs-pretrain");
}

// A map is refused, naming --models, exactly when its cells cost more plans than the budget; the
// cost of a cell is what its searches cost on one thread each, the same on every run.
TEST(GainMap, AMapOverItsBudgetIsRefusedExactly) {
  const ModelSpec m = builtin_model("llama3-8b");
  const GpuSpec& gpu = find_gpu("h100-sxm-80gb");
  const std::vector<GainMapCell> cells = gain_map({m}, gpu, {8, 16}, "plateau");
  const std::int64_t cost = cells[0].plans_evaluated + cells[1].plans_evaluated;
  ASSERT_GT(cells[0].plans_evaluated, 0);
  EXPECT_EQ(gain_map({m}, gpu, {8, 16}, "plateau")[1].plans_evaluated, cells[1].plans_evaluated);
  EXPECT_NO_THROW(gain_map({m}, gpu, {8, 16}, "plateau", cost));
  EXPECT_EQ(thrown_field([&] { gain_map({m}, gpu, {8, 16}, "plateau", cost - 1); }), "--models");
}

TEST(GainMap, BadListsNameTheirFlag) {
  const ModelSpec m = builtin_model("llama3-8b");
  const GpuSpec& gpu = find_gpu("h100-sxm-80gb");
  EXPECT_EQ(thrown_field([&] { gain_map({}, gpu, {8}); }), "--models");
  EXPECT_EQ(thrown_field([&] { gain_map({m}, gpu, {}); }), "--gpus");
  EXPECT_EQ(thrown_field([&] { gain_map({m}, gpu, {8, 0}); }), "--gpus");
  EXPECT_EQ(thrown_field([&] { gain_map({m}, gpu, {-8}); }), "--gpus");
  EXPECT_EQ(thrown_field([&] { gain_map({m}, gpu, {kMaxAdaptGpus + 1}); }), "--gpus");
  EXPECT_EQ(thrown_field([&] { gain_map(std::vector<ModelSpec>(kMaxGainMapCells + 1, m), gpu, {8}); }), "--gpus");
  EXPECT_EQ(thrown_field([&] { gain_map({m}, gpu, {8}, "no-such-scenario"); }), "scenario");
}

}  // namespace
}  // namespace tessera
