// The cost of not re-planning when the cluster changes (issue 17, part 4; APNet'25 re-plans on a
// changing topology): the best plan under the old conditions (an old calibration profile, a link
// that has since slowed down), re-costed under the current ones, against the current best plan.
// The two clusters must be the same machines (pools, GPU counts, node sizes) seen through
// different profiles or link measurements, so a plan of one is a plan of the other.
#pragma once

#include <optional>

#include "cost/estimate.h"
#include "hardware/cluster.h"
#include "hardware/mixed_cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"
#include "search/mixed_planner.h"
#include "search/planner.h"

namespace tessera {

// Keeping the old plan: its step under the current conditions against the current best's.
struct KeepingCost {
  double old_plan_now_s = 0;  // the old plan re-costed under the current conditions
  double new_best_s = 0;      // the current best plan under the current conditions
  // Seconds per step lost by keeping the old plan (negative if the search missed it, never clamped).
  double per_step_s() const { return old_plan_now_s - new_best_s; }
  double fraction() const { return per_step_s() / new_best_s; }
};

// Which sides have a plan that fits: no plan fitting under one set of conditions is an answer,
// reported as such (no keeping cost then), not an error.
struct PlanComparison {
  std::optional<RankedPlan> old_best;  // the planner's best under the old conditions (estimate: old conditions)
  std::optional<RankedPlan> new_best;  // the planner's best under the current conditions
  Estimate old_plan_now;          // old_best.plan under the current conditions
  bool old_plan_fits_now = true;  // within the current search's memory limit
  bool changed = false;           // the recommendation is another configuration
  KeepingCost keeping;
};

// Plans on both clusters and re-costs the old best with estimate() (the simulated pipeline, as the
// planner's printed times). A side without a fitting plan is left empty; old_plan_now and the
// keeping cost are set only when both sides have one.
PlanComparison compare_plans(const ModelSpec& model, const Cluster& old_cluster, const Cluster& new_cluster,
                             const Workload& workload, const PlanConstraints& constraints,
                             const PlannerOptions& options);

struct MixedPlanComparison {
  bool both_fit() const { return old_best.strategy != MixedStrategy::none && new_best.strategy != MixedStrategy::none; }
  MixedPlan old_best;  // under the old conditions
  MixedPlan new_best;  // under the current conditions
  bool changed = false;
  KeepingCost keeping;  // old_plan_now_s is infinite when the old plan no longer fits
};

// The same over pools of GPUs: the old plan re-costed with mixed_plan_time_s (its shares and pool
// plans, or its cross-pool pipeline, kept). A side where no plan fits has strategy none; the keeping
// cost is set only when both sides have a plan.
MixedPlanComparison compare_mixed_plans(const ModelSpec& model, const MixedCluster& old_cluster,
                                        const MixedCluster& new_cluster, const Workload& workload,
                                        const PlanConstraints& constraints, const PlannerOptions& options);

// One configuration: the same strategy, pools, shares and per-pool plans (or pipeline segments).
bool same_mixed_plan(const MixedPlan& a, const MixedPlan& b);

}  // namespace tessera
