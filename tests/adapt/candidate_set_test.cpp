// Candidates: the planner's best plan at every grid batch, and each plan at every batch it runs.
#include <gtest/gtest.h>

#include <atomic>

#include "adapt/candidate_set.h"
#include "adapt/plan_family.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/error.h"
#include "cost/cost_model.h"
#include "plan/plan.h"

namespace tessera {
namespace {

TEST(CandidateSet, HoldsThePlannersBestAtEveryBatchAndEveryPlanWhereItRuns) {
  const ModelSpec model = builtin_model("llama3-8b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:32");
  const std::vector<std::int64_t> grid = {16, 64, 256};
  const CandidateSet set = build_candidates(model, cluster, 4096, grid);
  EXPECT_EQ(set.batches, grid);
  ASSERT_EQ(set.planner_best.size(), grid.size());
  PlannerOptions one;
  one.top_k = 1;
  for (std::size_t b = 0; b < grid.size(); ++b) {
    const Candidate& best = set.candidates[set.planner_best[b]];
    EXPECT_EQ(best.global_batch, grid[b]);
    const PlanSearch search = search_plans(model, cluster, Workload{grid[b], 4096}, CandidateOptions{}.constraints, one);
    EXPECT_DOUBLE_EQ(best.predicted_step_time_s, search.plans[0].estimate.iteration_time_s);
    // No candidate at this batch is predicted faster than the planner's best.
    for (const Candidate& c : set.candidates)
      if (c.global_batch == grid[b]) {
        EXPECT_GE(c.predicted_step_time_s, best.predicted_step_time_s * (1.0 - 1e-12));
      }
  }
  for (std::size_t i = 0; i < set.plans.size(); ++i)
    for (std::size_t j = i + 1; j < set.plans.size(); ++j) EXPECT_FALSE(same_plan(set.plans[i], set.plans[j]));
  for (const Candidate& c : set.candidates) {
    EXPECT_NO_THROW(validate_plan(set.plan(c), model, cluster, set.workload(c)));
    const Estimate e = estimate(model, cluster, set.plan(c), set.workload(c));
    EXPECT_TRUE(e.fits);
    EXPECT_DOUBLE_EQ(e.iteration_time_s, c.predicted_step_time_s);
  }
  // Plans found at one batch are candidates at the others too (batch-only moves).
  EXPECT_GT(set.candidates.size(), set.plans.size());
}

// The grid's searches run in parallel, each on one thread: the candidates and the count of plans
// costed do not depend on how many run at once, and a budget is overdrawn exactly when the
// searches together cost more than it held.
TEST(CandidateSet, ParallelSearchesGiveOneAnswerAndSpendAnExactBudget) {
  const ModelSpec model = builtin_model("llama3-8b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:32");
  const std::vector<std::int64_t> grid = {16, 32, 64, 128, 256};
  CandidateOptions one, three;
  one.threads = 1;
  three.threads = 3;
  const CandidateSet a = build_candidates(model, cluster, 4096, grid, one);
  const CandidateSet b = build_candidates(model, cluster, 4096, grid, three);
  EXPECT_EQ(a.plans_evaluated, b.plans_evaluated);
  EXPECT_EQ(a.batches, b.batches);
  EXPECT_EQ(a.planner_best, b.planner_best);
  ASSERT_EQ(a.plans.size(), b.plans.size());
  for (std::size_t i = 0; i < a.plans.size(); ++i) EXPECT_TRUE(same_plan(a.plans[i], b.plans[i]));
  ASSERT_EQ(a.candidates.size(), b.candidates.size());
  for (std::size_t i = 0; i < a.candidates.size(); ++i)
    EXPECT_EQ(a.candidates[i].predicted_step_time_s, b.candidates[i].predicted_step_time_s);

  std::atomic<std::int64_t> exact{a.plans_evaluated};
  three.evaluation_budget = &exact;
  EXPECT_NO_THROW(build_candidates(model, cluster, 4096, grid, three));
  EXPECT_EQ(exact.load(), 0);
  std::atomic<std::int64_t> short_by_one{a.plans_evaluated - 1};
  three.evaluation_budget = &short_by_one;
  try {
    build_candidates(model, cluster, 4096, grid, three);
    ADD_FAILURE() << "a budget one plan short was not overdrawn";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), kEvaluationBudgetField);
  }
}

// The pricing build_candidates records rebuilds the cluster, so a candidate's run priced with the
// catalog GPU is its predicted step time exactly.
TEST(CandidateSet, RecordsThePricingThatReproducesItsStepTimes) {
  const ModelSpec model = builtin_model("gpt3-1.7b");
  const Cluster cluster = load_cluster("a100-sxm-80gb:8");
  const CandidateSet set = build_candidates(model, cluster, 2048, std::vector<std::int64_t>{32});
  ASSERT_TRUE(set.pricing.has_value());
  EXPECT_EQ(set.pricing->model.name, model.name);
  EXPECT_EQ(set.pricing->gpu.key, cluster.gpu.key);
  EXPECT_EQ(set.pricing->shape.gpus, 8);
  for (const Candidate& c : set.candidates) {
    const RunMeasurement run = set.run_of(c);
    EXPECT_TRUE(same_plan(run.plan, set.plan(c)));
    EXPECT_EQ(run.workload.global_batch, c.global_batch);
    EXPECT_DOUBLE_EQ(predict_iteration_time_s(run, set.pricing->gpu), c.predicted_step_time_s);
  }
  // Without pricing (step times the caller gave) there is no run to build.
  CandidateSet given = set;
  given.pricing.reset();
  EXPECT_THROW(given.run_of(given.candidates.front()), Error);
}

TEST(CandidateSet, ShapeOfRebuildsMakeClusterAndRefusesEditedLinks) {
  const GpuSpec gpu = find_gpu("h100-sxm-80gb");
  for (const ClusterShape shape : {ClusterShape{4, 0, 0}, ClusterShape{32, 0, 0}, ClusterShape{16, 8, 200}}) {
    const Cluster cluster = cluster_for(gpu, shape);
    const auto back = shape_of(cluster);
    ASSERT_TRUE(back.has_value());
    const Cluster rebuilt = cluster_for(gpu, *back);
    EXPECT_EQ(rebuilt.nodes, cluster.nodes);
    EXPECT_EQ(rebuilt.gpus_per_node, cluster.gpus_per_node);
    EXPECT_NEAR(rebuilt.inter_node.bandwidth_bytes_per_s / cluster.inter_node.bandwidth_bytes_per_s, 1.0, 1e-12);
  }
  Cluster edited = cluster_for(gpu, ClusterShape{32, 0, 0});
  edited.intra_node.bandwidth_bytes_per_s *= 0.5;  // no NIC rate explains a slower NVLink
  EXPECT_FALSE(shape_of(edited).has_value());
}

TEST(CandidateSet, NothingFitsIsAnErrorNamingTheCluster) {
  try {
    build_candidates(builtin_model("qwen2.5-72b"), load_cluster("h100-sxm-80gb:1"), 4096, std::vector<std::int64_t>{8});
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "cluster");
  }
}

}  // namespace
}  // namespace tessera
