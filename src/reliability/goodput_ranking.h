// The planner's list re-ranked by expected goodput under failures: throughput (tokens/s) x the
// useful fraction of wall-clock (job_goodput.h). Exact over the planner's list: the list is in
// step-time order up to ties (plans within kTimeTieFraction of each other are ordered by memory
// and simplicity), so no later plan is more than that fraction faster than the current one, and
// since a fraction is at most 1 no plan whose throughput times (1 + kTimeTieFraction) is below the
// best goodput found can win; the walk stops there.
#pragma once

#include <cstddef>
#include <vector>

#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"
#include "reliability/job_goodput.h"
#include "search/planner.h"

namespace tessera {

struct GoodputPlan {
  RankedPlan ranked;
  FailureOutcome failures;
  double goodput_tokens_per_s = 0;
  std::size_t time_rank = 0;  // its place in the step-time list (0 = fastest)
};

struct GoodputRanking {
  std::vector<GoodputPlan> plans;  // best expected goodput first, at most top_k
  std::size_t walked = 0;          // plans of the step-time list priced
  // True when the walk stopped at a plan whose throughput is below the best goodput (or the list
  // held every feasible plan): no plan further down can win.
  bool exact = false;
};

// `list_complete`: the search returned every plan it ranked (fewer than it was asked for).
GoodputRanking rank_by_goodput(const PlanSearch& search, const ModelSpec& model, const Cluster& cluster,
                               const FailureModel& failures, std::size_t top_k, bool list_complete);

// The search with its plans in goodput order (what the plan report prints).
PlanSearch reordered_search(const PlanSearch& search, const GoodputRanking& ranking);

}  // namespace tessera
