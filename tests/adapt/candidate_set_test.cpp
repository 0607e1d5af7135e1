// Candidates: the planner's best plan at every grid batch, and each plan at every batch it runs.
#include <gtest/gtest.h>

#include "adapt/candidate_set.h"
#include "adapt/plan_family.h"
#include "core/error.h"
#include "cost/cost_model.h"
#include "io/gpu_catalog.h"
#include "io/model_source.h"

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
