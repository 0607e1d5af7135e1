// A pipeline across pools, costed stage by stage on each pool's GPUs.
#include <gtest/gtest.h>

#include <cmath>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/error.h"
#include "core/units.h"
#include "cost/cost_model.h"
#include "cost/cross_pool_pipeline_cost.h"

namespace tessera {
namespace {

// Two one-node pools of the same GPU joined by a link as fast, per replica's activation, as the
// homogeneous cluster's NIC carries 1/tp of it: the boundary between pools costs what a node
// boundary of the homogeneous pipeline costs.
MixedCluster twin_pools(const Cluster& node_pair, const Plan& plan) {
  MixedCluster mixed;
  const Cluster one_node = make_cluster(node_pair.gpu, node_pair.gpus_per_node);
  mixed.pools = {one_node, one_node};
  mixed.inter_pool.bandwidth_bytes_per_s =
      node_pair.inter_node.bandwidth_bytes_per_s * static_cast<double>(plan.tp * plan.dp);
  mixed.inter_pool.latency_s = node_pair.inter_node.latency_s;
  return mixed;
}

CrossPoolPlan halves_of(const Plan& plan, std::int64_t layers) {
  CrossPoolPlan cross;
  cross.base = plan;
  const std::int64_t half = plan.pp / 2;
  cross.segments = {{0, plan.tp, half, layers / 2, plan.precision, plan.fp8_recipe}, {1, plan.tp, half, layers / 2, plan.precision, plan.fp8_recipe}};
  return cross;
}

// The same layout over two identical pools is the homogeneous pipeline: every stage, boundary,
// gradient sync and memory term equal, so the step times agree to rounding.
TEST(CrossPoolPipelineCost, IdenticalPoolsEqualTheHomogeneousPipeline) {
  const ModelSpec model = builtin_model("llama3-8b");
  const GpuSpec& gpu = find_gpu("h100-sxm-80gb");
  const Cluster cluster = make_cluster(gpu, 16);
  const Workload w{64, 4096};
  for (const auto& [tp, dp, recompute] : {std::tuple{4, 1, Recompute::none}, std::tuple{2, 2, Recompute::selective},
                                          std::tuple{1, 4, Recompute::full}}) {
    Plan plan;
    plan.tp = tp;
    plan.dp = dp;
    plan.pp = 16 / (tp * dp);
    plan.micro_batch = 1;
    plan.recompute = recompute;
    plan.sequence_parallel = tp > 1;
    plan.zero = OptimizerSharding::zero1;
    validate_plan(plan, model, cluster, w);
    const Estimate homogeneous = estimate(model, cluster, plan, w);
    const MixedCluster mixed = twin_pools(cluster, plan);
    const CrossPoolPlan cross = halves_of(plan, model.layers);
    validate_cross_pool_plan(cross, model, mixed, w);
    const CrossPoolEstimate e = estimate_cross_pool(model, mixed, cross, w);
    EXPECT_NEAR(e.iteration_time_s, homogeneous.iteration_time_s, 1e-9 * homogeneous.iteration_time_s)
        << "tp=" << tp << " dp=" << dp;
    double peak = 0;
    for (const auto& s : e.stages) peak = std::max(peak, s.peak_memory_bytes);
    EXPECT_NEAR(peak, homogeneous.peak_memory_bytes, 1e-9 * peak);
    EXPECT_EQ(e.fits, homogeneous.fits);
  }
}

// Moving layers from the slow pool's stages to the fast pool's shortens the slow stages: the
// busiest stage's time is a sum of per-layer times, each stage's memory follows its own GPU.
TEST(CrossPoolPipelineCost, StagesAreCostedOnTheirOwnPool) {
  const ModelSpec model = builtin_model("llama3-8b");
  const MixedCluster mixed = load_mixed_cluster("a100-sxm-40gb:8+h100-sxm-80gb:8");
  const Workload w{32, 4096};
  CrossPoolPlan plan;
  plan.base.dp = 2;
  plan.base.micro_batch = 1;
  plan.base.sequence_parallel = true;
  plan.base.zero = OptimizerSharding::zero1;
  plan.segments = {{0, 4, 1, 16, Precision::bf16, Fp8Recipe::tensorwise}, {1, 4, 1, 16, Precision::bf16, Fp8Recipe::tensorwise}};
  const CrossPoolEstimate even = estimate_cross_pool(model, mixed, plan, w);
  ASSERT_EQ(even.stages.size(), 2u);
  EXPECT_EQ(even.stages[0].usable_memory_bytes, mixed.pools[0].gpu.usable_memory_gib * units::kGiB);
  EXPECT_EQ(even.stages[1].usable_memory_bytes, mixed.pools[1].gpu.usable_memory_gib * units::kGiB);
  // The same 16 layers (the first stage also holds the embedding, the last the head) run
  // slower on the A100.
  EXPECT_GT(even.stages[0].forward_s + even.stages[0].backward_s, even.stages[1].forward_s);
  plan.segments = {{0, 4, 1, 10, Precision::bf16, Fp8Recipe::tensorwise}, {1, 4, 1, 22, Precision::bf16, Fp8Recipe::tensorwise}};
  const CrossPoolEstimate shifted = estimate_cross_pool(model, mixed, plan, w);
  EXPECT_LT(shifted.stages[0].forward_s, even.stages[0].forward_s);
  EXPECT_GT(shifted.stages[1].forward_s, even.stages[1].forward_s);
  EXPECT_LT(shifted.iteration_time_s, even.iteration_time_s);
  // The step is never shorter than micro-batches x the busiest stage.
  for (const auto* e : {&even, &shifted}) {
    double busiest = 0;
    for (const auto& s : e->stages) busiest = std::max(busiest, s.forward_s + s.backward_s);
    EXPECT_GE(e->iteration_time_s, 16.0 * busiest);
    EXPECT_NEAR(e->pipeline_s + e->dp_sync_s + e->tail_s, e->iteration_time_s, 1e-12 * e->iteration_time_s);
  }
}

// The boundary between pools carries every replica's activation through the shared link.
TEST(CrossPoolPipelineCost, PoolBoundaryIsEveryReplicasActivationOverTheLink) {
  const ModelSpec model = builtin_model("llama3-8b");
  MixedCluster mixed = load_mixed_cluster("a100-sxm-40gb:8+h100-sxm-80gb:8");
  mixed.inter_pool = {100e9, 10e-6};
  Plan base;
  base.dp = 4;
  base.micro_batch = 2;
  const Workload w{64, 4096};
  const double bytes = 4.0 * 2.0 * 2.0 * 4096.0 * static_cast<double>(model.hidden);  // dp x bf16 x b x s x h
  EXPECT_NEAR(cross_pool_boundary_s(model, mixed, base, w), bytes / 100e9 + 10e-6, 1e-15);
  // Halving the link's bandwidth slows the step of a pipeline that crosses it.
  CrossPoolPlan plan;
  plan.base = base;
  plan.base.zero = OptimizerSharding::zero1;
  plan.segments = {{0, 2, 1, 12, Precision::bf16, Fp8Recipe::tensorwise}, {1, 2, 1, 20, Precision::bf16, Fp8Recipe::tensorwise}};
  const double fast = estimate_cross_pool(model, mixed, plan, w).iteration_time_s;
  mixed.inter_pool.bandwidth_bytes_per_s /= 2;
  EXPECT_GT(estimate_cross_pool(model, mixed, plan, w).iteration_time_s, fast);
}

}  // namespace
}  // namespace tessera
