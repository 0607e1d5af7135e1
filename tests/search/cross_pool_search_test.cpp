// The search over pipelines across pools: exact against brute force, and never worse than the
// whole-replica answer.
#include <gtest/gtest.h>

#include <limits>
#include <random>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "cost/cross_pool_pipeline_cost.h"
#include "search/cross_pool_search.h"
#include "search/mixed_planner.h"
#include "search/plan_space.h"

namespace tessera {
namespace {

struct BruteForce {
  double best_s = std::numeric_limits<double>::infinity();
  std::int64_t candidates = 0;
};

// Every valid cross-pool plan with mb and zero pinned (16-bit or FP8 per segment where the GPU has it), built and validated independently of the
// search's enumeration, each costed by the public estimate_cross_pool.
BruteForce brute_force(const ModelSpec& model, const MixedCluster& cluster, const Workload& w,
                       const PlanConstraints& fix) {
  BruteForce out;
  for (const auto& order : std::vector<std::vector<std::size_t>>{{0, 1}, {1, 0}})
    for (std::int64_t dp = 1; dp <= 32; ++dp)
      for (std::int64_t tp0 : {1, 2, 4, 8})
        for (std::int64_t tp1 : {1, 2, 4, 8})
          for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full})
            for (int precisions = 0; precisions < 4; ++precisions)
            for (std::int64_t first = 1; first < model.layers; ++first) {
              CrossPoolPlan plan;
              plan.base = fix.defaults;
              plan.base.dp = dp;
              plan.base.micro_batch = *fix.micro_batch;
              plan.base.zero = *fix.zero;
              plan.base.recompute = r;
              plan.base.sequence_parallel = true;
              plan.base.overlap_tp_comm = true;
              const std::int64_t tps[2] = {tp0, tp1};
              bool shaped = true;
              for (std::size_t g = 0; g < 2; ++g) {
                const Cluster& pool = cluster.pools[order[g]];
                if (pool.gpus() % (dp * tps[g]) != 0) shaped = false;
                const std::int64_t stages = shaped ? pool.gpus() / (dp * tps[g]) : 1;
                const Precision precision = (precisions >> g) & 1 ? Precision::fp8 : Precision::bf16;
                plan.segments.push_back({order[g], tps[g], stages, g == 0 ? first : model.layers - first, precision,
                                         natural_fp8_recipe(pool.gpu)});
              }
              if (!shaped) continue;
              try {
                validate_cross_pool_plan(plan, model, cluster, w);
              } catch (const Error&) {
                continue;
              }
              ++out.candidates;
              const CrossPoolEstimate e = estimate_cross_pool(model, cluster, plan, w);
              bool fits = true;
              for (const auto& s : e.stages)
                fits = fits && s.peak_memory_bytes <= memory_limit(cluster.pools[s.pool], fix).limit_bytes;
              if (fits) out.best_s = std::min(out.best_s, e.iteration_time_s);
            }
  return out;
}

// The space both brute-force comparisons search: one micro-batch, ZeRO-1 (small enough to cost
// every candidate).
PlanConstraints one_microbatch_zero1() {
  PlanConstraints fix;
  fix.micro_batch = 1;
  fix.zero = OptimizerSharding::zero1;
  return fix;
}

// On small two-type clusters the branch-and-bound answer equals brute force, and so does the
// search's own exhaustive mode.
TEST(CrossPoolSearch, EqualsBruteForceOnSmallMixedClusters) {
#ifdef TESSERA_SANITIZED
  const std::vector<std::string> clusters = {"a100-sxm-40gb:8+h100-sxm-80gb:8"};
#else
  const std::vector<std::string> clusters = {"a100-sxm-40gb:8+h100-sxm-80gb:8", "a100-sxm-40gb:16+h100-sxm-80gb:16",
                                             "a100-sxm-80gb:24+h100-sxm-80gb:8"};
#endif
  const ModelSpec model = builtin_model("llama3-8b");
  const Workload w{32, 4096};
  const PlanConstraints fix = one_microbatch_zero1();
  for (const auto& spec : clusters) {
    const MixedCluster cluster = load_mixed_cluster(spec);
    const BruteForce brute = brute_force(model, cluster, w, fix);
    const CrossPoolSearch pruned = search_cross_pool_pipelines(model, cluster, w, fix);
    const CrossPoolSearch exhaustive = search_cross_pool_pipelines(model, cluster, w, fix, true);
    ASSERT_TRUE(pruned.best.has_value()) << spec;
    EXPECT_GT(brute.candidates, 100) << spec;
    EXPECT_EQ(exhaustive.evaluated, brute.candidates) << spec;
    EXPECT_NEAR(pruned.estimate.iteration_time_s, brute.best_s, 1e-12 * brute.best_s) << spec;
    EXPECT_NEAR(exhaustive.estimate.iteration_time_s, brute.best_s, 1e-12 * brute.best_s) << spec;
    // The bounds prune: far fewer simulations than candidates, and layer splits whose bound is
    // above the best are skipped before their bound is even computed.
    EXPECT_LT(pruned.simulated * 4, brute.candidates) << spec;
    EXPECT_LT(pruned.evaluated, brute.candidates) << spec;
    EXPECT_NO_THROW(validate_cross_pool_plan(*pruned.best, model, cluster, w));
    EXPECT_TRUE(pruned.estimate.fits);
  }
}

// A pin the space does not hold leaves it empty rather than ignoring the pin.
TEST(CrossPoolSearch, UnsupportedPinsLeaveNoPlan) {
  const ModelSpec model = builtin_model("llama3-8b");
  const MixedCluster cluster = load_mixed_cluster("a100-sxm-40gb:8+h100-sxm-80gb:8");
  PlanConstraints cp;
  cp.cp = 2;
  EXPECT_FALSE(search_cross_pool_pipelines(model, cluster, {32, 4096}, cp).best.has_value());
  PlanConstraints tp;
  tp.tp = 4;
  tp.micro_batch = 1;
  const CrossPoolSearch pinned = search_cross_pool_pipelines(model, cluster, {32, 4096}, tp);
  ASSERT_TRUE(pinned.best.has_value());
  for (const auto& s : pinned.best->segments) EXPECT_EQ(s.tp, 4);
}

// Over random pool sizes the mixed answer is never slower than whole replicas per pool or the
// best single pool, and its strategy names the one it took.
TEST(CrossPoolSearch, MixedAnswerNeverSlowerThanWholeReplicasOrOnePool) {
  const ModelSpec model = builtin_model("llama3-8b");
  std::mt19937_64 rng(17);
  PlannerOptions options;
  options.threads = 2;
  PlanConstraints fix;
  fix.micro_batch = 1;
#ifdef TESSERA_SANITIZED
  const int draws = 2;
#else
  const int draws = 6;
#endif
  for (int i = 0; i < draws; ++i) {
    const std::int64_t a100 = 8 * static_cast<std::int64_t>(1 + rng() % 4), h100 = 8 * static_cast<std::int64_t>(1 + rng() % 2);
    const std::string spec = "a100-sxm-40gb:" + std::to_string(a100) + "+h100-sxm-80gb:" + std::to_string(h100);
    const MixedCluster cluster = load_mixed_cluster(spec);
    const MixedPlan plan = search_mixed_plans(model, cluster, {64, 4096}, fix, options);
    ASSERT_NE(plan.strategy, MixedStrategy::none) << spec;
    if (plan.replica_time_s > 0) {
      EXPECT_LE(plan.iteration_time_s, plan.replica_time_s) << spec;
    }
    if (plan.best_single_time_s > 0) {
      EXPECT_LE(plan.iteration_time_s, plan.best_single_time_s) << spec;
    }
    if (plan.cross_pool) {
      EXPECT_LE(plan.iteration_time_s, plan.cross_pool_estimate.iteration_time_s) << spec;
    }
    const double chosen = plan.strategy == MixedStrategy::cross_pool ? plan.cross_pool_estimate.iteration_time_s
                                                                     : plan.replica_time_s;
    EXPECT_DOUBLE_EQ(plan.iteration_time_s, chosen) << spec;
    // Re-costing the answer on the same cluster gives its time back.
    EXPECT_NEAR(mixed_plan_time_s(model, cluster, {64, 4096}, plan), plan.iteration_time_s,
                1e-9 * plan.iteration_time_s) << spec;
  }
}

// The planner passes its whole-replica time as must_beat_s: a pipeline faster than it is found
// exactly as without the bound, and none is reported when none beats it.
TEST(CrossPoolSearch, MustBeatKeepsOnlyFasterPipelines) {
  const ModelSpec model = builtin_model("llama3-8b");
  const MixedCluster cluster = load_mixed_cluster("a100-sxm-40gb:8+h100-sxm-80gb:8");
  const Workload w{32, 4096};
  const PlanConstraints fix = one_microbatch_zero1();
  const CrossPoolSearch free = search_cross_pool_pipelines(model, cluster, w, fix);
  ASSERT_TRUE(free.best.has_value());
  const double best_s = free.estimate.iteration_time_s;
  const CrossPoolSearch above = search_cross_pool_pipelines(model, cluster, w, fix, false, best_s * (1 + 1e-9));
  ASSERT_TRUE(above.best.has_value());
  EXPECT_EQ(above.estimate.iteration_time_s, best_s);
  EXPECT_LE(above.simulated, free.simulated);
  EXPECT_FALSE(search_cross_pool_pipelines(model, cluster, w, fix, false, best_s).best.has_value());
}

}  // namespace
}  // namespace tessera
