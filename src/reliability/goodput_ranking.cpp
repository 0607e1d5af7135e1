#include "reliability/goodput_ranking.h"

#include <algorithm>

namespace tessera {

GoodputRanking rank_by_goodput(const PlanSearch& search, const ModelSpec& model, const Cluster& cluster,
                               const FailureModel& failures, std::size_t top_k, bool list_complete) {
  failures.validate();
  GoodputRanking out;
  double best = 0;
  bool stopped = false;
  for (std::size_t i = 0; i < search.plans.size(); ++i) {
    const RankedPlan& r = search.plans[i];
    // The step-time list orders plans within kTimeTieFraction of each other by memory and
    // simplicity (order_ties), so a later plan can be up to that much faster than this one: stop
    // only when even that cannot reach the best goodput.
    if (r.estimate.tokens_per_s * (1.0 + kTimeTieFraction) < best) {
      stopped = true;
      break;
    }
    GoodputPlan g{r, plan_failure_outcome(failures, model, r.plan, cluster, r.estimate.iteration_time_s), 0, i};
    g.goodput_tokens_per_s = r.estimate.tokens_per_s * g.failures.useful_fraction;
    best = std::max(best, g.goodput_tokens_per_s);
    out.plans.push_back(std::move(g));
    ++out.walked;
  }
  out.exact = stopped || list_complete;
  // Stable: equal goodput keeps the step-time order (and its tie rules).
  std::stable_sort(out.plans.begin(), out.plans.end(), [](const GoodputPlan& a, const GoodputPlan& b) {
    return a.goodput_tokens_per_s > b.goodput_tokens_per_s;
  });
  if (out.plans.size() > top_k) out.plans.resize(top_k);
  return out;
}

PlanSearch reordered_search(const PlanSearch& search, const GoodputRanking& ranking) {
  PlanSearch s = search;
  s.plans.clear();
  for (const auto& g : ranking.plans) s.plans.push_back(g.ranked);
  return s;
}

}  // namespace tessera
