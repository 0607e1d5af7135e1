// Plans over pools of different GPUs.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/error.h"
#include "cost/collective_cost.h"
#include "model/parameter_count.h"
#include "search/mixed_planner.h"

namespace tessera {
namespace {

PlannerOptions two_threads() {
  PlannerOptions o;
  o.threads = 2;
  return o;
}

// 64 H100 + 128 A100 on one fabric: splitting the batch by speed beats the H100 pool alone, the
// shares add up to the batch, and every pool's plan is valid for its share.
TEST(MixedPlanner, MixedPoolsBeatTheBestSinglePool) {
  const ModelSpec model = builtin_model("llama3-8b");
  const MixedCluster cluster = load_mixed_cluster("h100-sxm-80gb:64+a100-sxm-80gb:128");
  const Workload w{512, 4096};
  const MixedPlan plan = search_mixed_plans(model, cluster, w, {}, two_threads());
  ASSERT_EQ(plan.pools.size(), 2u);
  EXPECT_LT(plan.iteration_time_s, plan.best_single_time_s);
  std::int64_t total = 0;
  double slowest = 0;
  for (const auto& a : plan.pools) {
    total += a.global_batch;
    EXPECT_NO_THROW(validate_plan(a.plan.plan, model, cluster.pools[a.pool], {a.global_batch, w.seq_len}));
    EXPECT_TRUE(a.plan.estimate.fits);
    slowest = std::max(slowest, a.plan.estimate.iteration_time_s);
  }
  EXPECT_EQ(total, w.global_batch);
  // The step is the slowest pool plus the cross-pool gradient sync.
  EXPECT_DOUBLE_EQ(plan.replica_time_s, slowest + plan.sync_time_s);
  EXPECT_DOUBLE_EQ(plan.sync_time_s, cross_pool_sync_s(model, cluster, 2));
  EXPECT_TRUE(plan.left_out.empty());
  // The faster GPU gets more sequences per GPU.
  const auto& h100 = plan.pools[0].pool == 0 ? plan.pools[0] : plan.pools[1];
  const auto& a100 = plan.pools[0].pool == 0 ? plan.pools[1] : plan.pools[0];
  EXPECT_GT(static_cast<double>(h100.global_batch) / 64.0, static_cast<double>(a100.global_batch) / 128.0);
}

// Offering FP8 (on the pool that has it) only widens each pool's space: the mixed step is never
// slower than with 16-bit only, and the 16-bit A100 pool still joins the FP8 H100 pool. (Shares in
// proportion to speed used to land on counts no data-parallel degree divides, so the FP8 search
// dropped the A100 pool and ran slower than the 16-bit one.)
TEST(MixedPlanner, OfferingFp8NeverSlowsTheMixedStep) {
  const ModelSpec model = builtin_model("llama3-8b");
  const MixedCluster cluster = load_mixed_cluster("h100-sxm-80gb:64+a100-sxm-80gb:128");
  const Workload w{512, 4096};
  const MixedPlan bf16 = search_mixed_plans(model, cluster, w, {}, two_threads());
  PlanConstraints with_fp8;
  with_fp8.precision_choices = {Precision::bf16, Precision::fp8};
  const MixedPlan fp8 = search_mixed_plans(model, cluster, w, with_fp8, two_threads());
  EXPECT_LE(fp8.iteration_time_s, bf16.iteration_time_s);
  EXPECT_EQ(fp8.pools.size(), 2u);
  EXPECT_LE(fp8.best_single_time_s, bf16.best_single_time_s);
}

// A small slow pool behind a slow link only adds a gradient exchange: it is left out and the plan
// is the best single pool's.
TEST(MixedPlanner, ASlowPoolIsLeftOut) {
  const std::string path = ::testing::TempDir() + "/slow_pool.json";
  std::ofstream(path) << R"({"pools": [{"gpu": "h100-sxm-80gb", "gpus": 64}, {"gpu": "mi210", "gpus": 4}],
                            "inter_pool_gbps": 25})";
  const ModelSpec model = builtin_model("llama3-8b");
  const MixedCluster cluster = load_mixed_cluster(path);
  const MixedPlan plan = search_mixed_plans(model, cluster, {512, 4096}, {}, two_threads());
  ASSERT_EQ(plan.pools.size(), 1u);
  EXPECT_EQ(plan.pools[0].pool, 0u);
  ASSERT_EQ(plan.left_out.size(), 1u);
  EXPECT_EQ(plan.left_out[0], 1u);
  EXPECT_DOUBLE_EQ(plan.iteration_time_s, plan.best_single_time_s);
  std::remove(path.c_str());
}

// Cross-pool sync: a ring all-reduce of the fp32 gradients over the pools.
TEST(MixedPlanner, CrossPoolSyncIsARingAllReduceOfTheGradients) {
  const ModelSpec model = builtin_model("llama3-8b");
  MixedCluster cluster = load_mixed_cluster("h100-sxm-80gb:8+a100-sxm-80gb:8");
  const double bytes = 4.0 * count_parameters(model).total();
  const GroupLink link{cluster.inter_pool.bandwidth_bytes_per_s, cluster.inter_pool.latency_s};
  EXPECT_DOUBLE_EQ(cross_pool_sync_s(model, cluster, 2), all_reduce_time_s(bytes, 2, link));
  EXPECT_DOUBLE_EQ(cross_pool_sync_s(model, cluster, 1), 0.0);
}

TEST(MixedCluster, PoolsJsonNeedsALinkBetweenPools) {
  const std::string path = ::testing::TempDir() + "/no_link.json";
  std::ofstream(path) << R"({"pools": [{"gpu": "h100-sxm-80gb", "gpus": 8}, {"gpu": "a100-sxm-80gb", "gpus": 8}]})";
  try {
    load_mixed_cluster(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "cluster.inter_pool_gbps");
  }
  // estimate-style single-cluster loading refuses pools, naming the field.
  try {
    load_cluster(path);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "cluster.pools");
  }
  std::remove(path.c_str());
}

}  // namespace
}  // namespace tessera
