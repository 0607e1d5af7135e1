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

}  // namespace
}  // namespace tessera
