#include "search/plan_ranking.h"

#include <algorithm>

#include "search/plan_space.h"

namespace tessera {

namespace {
// The keys that make two plans different models of execution for a user: the model-parallel
// layout, recompute and precision. Plans equal in these differ only in how the data-parallel
// and context-parallel ranks share the batch (dp x cp, micro-batch), the optimizer sharding or a
// switch (FP8 param gather, dispatcher, overlaps).
bool same_layout(const Plan& a, const Plan& b) {
  const auto keys = [](const Plan& p) {
    return std::tie(p.tp, p.pp, p.ep, p.etp, p.vpp, p.recompute, p.recompute_layers, p.recompute_modules, p.precision,
                    p.fp8_recipe, p.framework, p.flash_attention, p.first_stage_layers, p.last_stage_layers, p.account_embedding,
                    p.account_loss);
  };
  return keys(a) == keys(b);
}

// `k` ties `r` in time (within kTimeTieFraction) with no more memory and no more groups crossing
// nodes (the caller checks they share a layout).
bool dominates(const RankedPlan& k, const RankedPlan& r, const Cluster& cluster) {
  const double t = r.estimate.iteration_time_s, tk = k.estimate.iteration_time_s;
  return t >= tk * (1.0 - kTimeTieFraction) && t <= tk * (1.0 + kTimeTieFraction) &&
         r.estimate.peak_memory_bytes >= k.estimate.peak_memory_bytes &&
         cross_node_groups(r.plan, cluster) >= cross_node_groups(k.plan, cluster);
}

}  // namespace

// Sorted best first; drops every entry identical in estimate to a better one.
std::int64_t drop_aliases(std::vector<RankedPlan>& plans) {
  std::sort(plans.begin(), plans.end(), ranked_before);
  std::vector<RankedPlan> kept;
  kept.reserve(plans.size());
  for (auto& r : plans) {
    bool alias = false;
    for (const auto& k : kept)
      alias = alias || same_estimate(k.estimate, r.estimate) || same_configuration(k.plan, r.plan);
    if (!alias) kept.push_back(r);
  }
  const auto dropped = static_cast<std::int64_t>(plans.size() - kept.size());
  plans = std::move(kept);
  return dropped;
}

// Within a run of ties (times within kTimeTieFraction of the run's fastest): lower peak memory,
// then fewer groups crossing nodes, then the simpler plan.
void order_ties(std::vector<RankedPlan>& plans, const Cluster& cluster) {
  const auto tie_order = [&](const RankedPlan& a, const RankedPlan& b) {
    if (a.estimate.peak_memory_bytes != b.estimate.peak_memory_bytes)
      return a.estimate.peak_memory_bytes < b.estimate.peak_memory_bytes;
    const int ca = cross_node_groups(a.plan, cluster), cb = cross_node_groups(b.plan, cluster);
    if (ca != cb) return ca < cb;
    return ranked_before(a, b);
  };
  for (std::size_t i = 0; i < plans.size();) {
    const double run_end_s = plans[i].estimate.iteration_time_s * (1.0 + kTimeTieFraction);
    std::size_t j = i + 1;
    while (j < plans.size() && plans[j].estimate.iteration_time_s <= run_end_s) ++j;
    std::sort(plans.begin() + static_cast<std::ptrdiff_t>(i), plans.begin() + static_cast<std::ptrdiff_t>(j), tie_order);
    i = j;
  }
}

// Drops (and counts) each plan that a better-ranked plan of the same layout dominates: zero1 and
// zero3 costing the same, dp and cp swapped with the micro-batch, a switch that buys nothing.
std::int64_t drop_dominated_variants(std::vector<RankedPlan>& plans, const Cluster& cluster) {
  std::vector<RankedPlan> kept;
  kept.reserve(plans.size());
  for (auto& r : plans) {
    const bool dominated = std::any_of(kept.begin(), kept.end(), [&](const RankedPlan& k) {
      return same_layout(k.plan, r.plan) && dominates(k, r, cluster);
    });
    if (!dominated) kept.push_back(std::move(r));
  }
  const auto dropped = static_cast<std::int64_t>(plans.size() - kept.size());
  plans = std::move(kept);
  return dropped;
}

}  // namespace tessera
