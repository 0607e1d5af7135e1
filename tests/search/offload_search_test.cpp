// The offload ladder (search/offload_search.h): a job that fits on the GPUs is planned as before;
// one that does not gets the fastest plans that fit with state moved off the GPUs, each step of
// the ladder saying why it was needed; pinned tiers are searched as pinned.
#include "search/offload_search.h"

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "common/thrown_field.h"

namespace tessera {
namespace {

using testing::thrown_field;

PlannerOptions offload_options() {
  PlannerOptions o;
  o.top_k = 5;
  o.threads = 2;
  return o;
}

// One A100 40 GB in a DGX A100-like node (host memory and NVMe set here, so the test does not
// depend on the catalog's node figures).
Cluster one_a100_40gb() {
  Cluster c = make_cluster(find_gpu("a100-sxm-40gb"), 1);
  c.gpu.host.memory_gib = 1024;
  c.gpu.host.link_gbps = 24;
  c.gpu.host.cpu_adam_gparams_per_s = 1;
  c.gpu.host.nvme_tb = 15;
  c.gpu.host.nvme_gbps = 24;
  return c;
}

PlanConstraints framework(TrainingFramework f) {
  PlanConstraints fix;
  fix.defaults.framework = f;
  return fix;
}

TEST(OffloadSearch, AJobThatFitsOnTheGpusIsPlannedWithoutOffload) {
  const ModelSpec m = builtin_model("gpt3-1.7b");
  const OffloadSearch s = search_plans_with_offload(m, one_a100_40gb(), {32, 2048}, framework(TrainingFramework::deepspeed), offload_options());
  ASSERT_FALSE(s.search.plans.empty());
  EXPECT_EQ(s.steps.size(), 1u);
  for (const auto& r : s.search.plans) EXPECT_FALSE(r.plan.offload.any_offload());
}

// Llama 3.1 8B full fine-tuning needs 16-18 B of state per parameter (over 128 GB): no plan fits
// on one 40 GB GPU; with the optimizer on the host (ZeRO-Offload's 2 B per parameter on the GPU)
// it does.
TEST(OffloadSearch, EightBillionParametersOnOneFortyGigabyteGpuNeedTheOptimizerOnTheHost) {
  const ModelSpec m = builtin_model("llama3-8b");
  const OffloadSearch s = search_plans_with_offload(m, one_a100_40gb(), {8, 4096}, framework(TrainingFramework::deepspeed), offload_options());
  ASSERT_GE(s.steps.size(), 2u);
  EXPECT_FALSE(s.steps[0].placement.any_offload());
  EXPECT_EQ(s.steps[0].feasible, 0);
  ASSERT_FALSE(s.search.plans.empty());
  std::size_t first_fit = 0;
  while (first_fit < s.steps.size() && s.steps[first_fit].feasible == 0) ++first_fit;
  ASSERT_LT(first_fit, s.steps.size());
  EXPECT_EQ(s.steps[first_fit].placement.optimizer, MemoryTier::cpu);
  EXPECT_LE(s.steps.size(), first_fit + 2);  // one more step at most after the first that fits
  for (std::size_t i = 1; i < s.search.plans.size(); ++i)
    EXPECT_LE(s.search.plans[i - 1].estimate.iteration_time_s, s.search.plans[i].estimate.iteration_time_s);
  for (const auto& r : s.search.plans) {
    EXPECT_TRUE(r.plan.offload.any_offload());
    EXPECT_TRUE(r.estimate.fits);
    EXPECT_GT(r.estimate.time.optimizer_s, 0.0);
    // Offloaded state is counted in host memory, which holds it.
    EXPECT_GT(r.estimate.host_memory_bytes_per_node, 0.0);
    EXPECT_LE(r.estimate.host_memory_bytes_per_node, r.estimate.host_capacity_bytes_per_node);
  }
}

TEST(OffloadSearch, PinnedTiersAreSearchedAsPinnedAndRefusedWhereTheFrameworkCannot) {
  const ModelSpec m = builtin_model("gpt3-1.7b");
  PlanConstraints fix = framework(TrainingFramework::deepspeed);
  fix.offload_optimizer = MemoryTier::cpu;
  const OffloadSearch s = search_plans_with_offload(m, one_a100_40gb(), {32, 2048}, fix, offload_options());
  EXPECT_TRUE(s.pinned);
  ASSERT_FALSE(s.search.plans.empty());
  for (const auto& r : s.search.plans) EXPECT_EQ(r.plan.offload.optimizer, MemoryTier::cpu);
  PlanConstraints megatron = framework(TrainingFramework::megatron);
  megatron.offload_params = MemoryTier::cpu;
  EXPECT_EQ(thrown_field([&] { search_plans_with_offload(m, one_a100_40gb(), {32, 2048}, megatron, offload_options()); }),
            "offload_params");
}

TEST(OffloadSearch, EachFrameworksLadderPassesItsOwnChecks) {
  const Cluster c = one_a100_40gb();
  for (TrainingFramework f : {TrainingFramework::megatron, TrainingFramework::deepspeed, TrainingFramework::torchtitan,
                              TrainingFramework::pytorch}) {
    for (const StatePlacement& where : offload_ladder(f)) {
      Plan p;
      p.framework = f;
      p.offload = where;
      p.zero = where.params != MemoryTier::gpu || where.optimizer == MemoryTier::nvme || f == TrainingFramework::torchtitan ||
                       f == TrainingFramework::pytorch
                   ? OptimizerSharding::zero3
                   : OptimizerSharding::zero1;
      // DeepSpeed's cpu_checkpointing moves checkpoints (recompute full); Megatron's activation
      // offload runs without recomputation.
      const bool megatron_activations = f == TrainingFramework::megatron && where.activations == MemoryTier::cpu;
      p.recompute = megatron_activations ? Recompute::none : Recompute::full;
      EXPECT_EQ(thrown_field([&] { check_offload(p, c); }), "<no error>") << to_string(f);
      if (megatron_activations) {
        p.recompute = Recompute::full;
        EXPECT_EQ(thrown_field([&] { check_offload(p, c); }), "offload_activations");
      }
    }
  }
}

}  // namespace
}  // namespace tessera
