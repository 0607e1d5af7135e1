#include <gtest/gtest.h>

#include <algorithm>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "reliability/goodput_ranking.h"

namespace tessera {
namespace {

// The walk that stops once throughput falls below the best goodput finds the same best plans as
// pricing every plan of the list (the fraction is at most 1, so the skipped ones cannot win).
TEST(GoodputRanking, EarlyStopEqualsPricingTheWholeList) {
  const ModelSpec m = load_model("llama3-70b");
  const Cluster c = load_cluster("h100-sxm-80gb:256");
  PlannerOptions o;
  o.top_k = 40;
  o.threads = 2;
  const PlanSearch s = search_plans(m, c, Workload{512, 8192}, PlanConstraints{}, o);
  ASSERT_GT(s.plans.size(), 5u);
  FailureModel f;
  f.save.fully_parallel = false;  // plan-dependent checkpoint costs
  f.storage.node_write_gbps = 2;
  const GoodputRanking r = rank_by_goodput(s, m, c, f, 5, false);
  std::vector<double> all;
  for (const auto& p : s.plans)
    all.push_back(p.estimate.tokens_per_s * plan_failure_outcome(f, m, p.plan, c, p.estimate.iteration_time_s).useful_fraction);
  std::sort(all.rbegin(), all.rend());
  ASSERT_FALSE(r.plans.empty());
  for (std::size_t i = 0; i < r.plans.size(); ++i) EXPECT_DOUBLE_EQ(r.plans[i].goodput_tokens_per_s, all[i]) << i;
  EXPECT_LE(r.walked, s.plans.size());
  for (std::size_t i = 1; i < r.plans.size(); ++i)
    EXPECT_GE(r.plans[i - 1].goodput_tokens_per_s, r.plans[i].goodput_tokens_per_s);
  // The reordered search holds the same plans in goodput order.
  const PlanSearch re = reordered_search(s, r);
  ASSERT_EQ(re.plans.size(), r.plans.size());
  EXPECT_EQ(re.plans[0].estimate.iteration_time_s, r.plans[0].ranked.estimate.iteration_time_s);
}

// The planner's list is in step-time order only up to ties: plans within kTimeTieFraction of
// each other are ordered by memory and simplicity (order_ties), so a plan listed after another can
// be faster. Three copies of one plan (one useful fraction u, nearly 1 with rare failures): A, then
// B below A's goodput, then C, tied with B and faster than A. The walk must not stop at B.
TEST(GoodputRanking, WalksOnThroughARunOfTies) {
  const ModelSpec m = load_model("llama3-8b");
  const Cluster c = load_cluster("h100-sxm-80gb:64");
  PlannerOptions o;
  o.top_k = 1;
  PlanSearch s = search_plans(m, c, Workload{256, 4096}, PlanConstraints{}, o);
  ASSERT_FALSE(s.plans.empty());
  FailureModel f;
  f.rates.per_gpu_hour = 1e-7;  // a 64-GPU job's MTBF of ~18 years, inside the 100-year bound
  f.rates.per_node_hour = 0;
  f.rates.planned_per_node_hour = 0;
  const RankedPlan base = s.plans.front();
  const double u = plan_failure_outcome(f, m, base.plan, c, base.estimate.iteration_time_s).useful_fraction;
  const double t_a = base.estimate.tokens_per_s;
  RankedPlan b = base, faster = base;
  b.estimate.tokens_per_s = t_a * u * (1.0 - kTimeTieFraction / 4.0);             // below A's goodput
  faster.estimate.tokens_per_s = b.estimate.tokens_per_s * (1.0 + 0.9 * kTimeTieFraction);  // within B's tie run
  ASSERT_GT(faster.estimate.tokens_per_s, t_a) << "u = " << u << " must be within a tie of 1";
  s.plans = {base, b, faster};
  const GoodputRanking r = rank_by_goodput(s, m, c, f, 1, true);
  ASSERT_EQ(r.plans.size(), 1u);
  EXPECT_EQ(r.plans[0].time_rank, 2u);
  EXPECT_DOUBLE_EQ(r.plans[0].goodput_tokens_per_s, faster.estimate.tokens_per_s * u);
  EXPECT_EQ(r.walked, 3u);
}

}  // namespace
}  // namespace tessera
