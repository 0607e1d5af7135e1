// plan --compare-profile OLD.json: the best plan under the old conditions and under the current
// ones, whether the recommendation changed, and the cost of keeping the old plan
// (search/plan_comparison.h), as stable JSON and as text.
//
// JSON (both cluster kinds):
//   {"model", "workload": {"global_batch", "seq_len"}, "cluster_kind": "single_pool" | "mixed",
//    "old_conditions": {"profile": FILE, "links": LINKS},
//    "current_conditions": {"profile": FILE | null, "link_flags": {<flag fields given>}, "links": LINKS},
//    "old_best": PLAN | null, "new_best": PLAN | null (null: no plan fits under those conditions),
//    "recommendation_changed": bool,
//    "old_plan_now": {"iteration_time_s": s | null, "fits": bool} (null when a side has no plan),
//    "cost_of_keeping_old_plan": {"per_step_s", "percent", "per_1000_steps_s"} (null when it no longer fits
//     or a side has no plan)}
//   LINKS: {"pools": [{"pool", "gpu", "gpus", "intra_node_gbps", "intra_node_latency_us",
//           "inter_node_gbps", "inter_node_latency_us"}], "inter_pool_gbps", "inter_pool_latency_us"}
//           (the tiers in force, Gbit/s and us; the inter-pool pair null on one pool)
//   PLAN (single pool): {"plan": {...}, "shorthand", "iteration_time_s", "peak_memory_gib"}
//   PLAN (mixed): {"strategy", "iteration_time_s", "pools": [{"pool", "gpu", "global_batch", "plan",
//           "iteration_time_s"}], "cross_pool": null | {"dp", "micro_batch", "recompute", "zero",
//           "precision", "segments": [{"pool", "gpu", "tp", "stages", "layers"}]}, "left_out": [pool]}
//           ("pools" lists whole-replica plans; a cross-pool answer fills "cross_pool" instead)
//   A plan's iteration_time_s is under its own conditions; old_plan_now under the current ones.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "formats/calibration_profile_json.h"
#include "hardware/cluster.h"
#include "hardware/mixed_cluster.h"
#include "model/model_spec.h"
#include "search/plan_comparison.h"

namespace tessera {

// The cost per this many steps is reported too: a run's scale (the "per 1,000 steps").
inline constexpr double kComparisonReportSteps = 1000;

// Where each side's conditions come from.
struct ComparedConditions {
  std::string old_profile;      // --compare-profile
  std::string current_profile;  // --profile; empty: the catalog
  LinkOverrides link_flags;     // plan's link flags (current conditions only)
};

nlohmann::json plan_comparison_to_json(const PlanComparison& comparison, const ModelSpec& model,
                                       const Cluster& old_cluster, const Cluster& new_cluster, const Workload& workload,
                                       const ComparedConditions& conditions);
std::string plan_comparison_to_table(const PlanComparison& comparison, const ModelSpec& model,
                                     const Cluster& old_cluster, const Cluster& new_cluster, const Workload& workload,
                                     const ComparedConditions& conditions);

nlohmann::json mixed_plan_comparison_to_json(const MixedPlanComparison& comparison, const ModelSpec& model,
                                             const MixedCluster& old_cluster, const MixedCluster& new_cluster,
                                             const Workload& workload, const ComparedConditions& conditions);
std::string mixed_plan_comparison_to_table(const MixedPlanComparison& comparison, const ModelSpec& model,
                                           const MixedCluster& old_cluster, const MixedCluster& new_cluster,
                                           const Workload& workload, const ComparedConditions& conditions);

}  // namespace tessera
