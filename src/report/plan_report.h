// A plan search (search/planner.h) as stable JSON and as the human table, with the reason the
// winner beats the runner-up.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "export/megatron_launch.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "reliability/goodput_ranking.h"
#include "search/mixed_planner.h"
#include "search/planner.h"

namespace tessera {

// {"evaluated", "feasible", "search_time_s", "plans_per_s", "memory_limit_gib", "headroom_gib",
//  "aliases", "why", "plans": [{..., "confidence": {...}, "cross_node_groups"}]}.
nlohmann::json plan_search_to_json(const PlanSearch& search, const ModelSpec& model, const Cluster& cluster,
                                   const Workload& workload);
// The table, each plan's confidence, the why line and the winner in full. The limit printed is
// the search's own (PlanSearch::memory_limit_bytes); memory_limit_gib is used only when the
// search carries none.
std::string plan_search_to_table(const PlanSearch& search, const ModelSpec& model, const Cluster& cluster,
                                 const Workload& workload, double memory_limit_gib);
// "tp=8,pp=8 beats tp=4,pp=16 by 0.41 s (2.1%): pipeline bubble 0.30 s less, ...; 1.2 GiB more
// memory; differs in tp=8,pp=8 (runner-up tp=4,pp=16)"; for times equal within kTimeTieFraction
// "A ranks above B: equal time within 0.1% (...); 0.2 GiB less memory; ...; differs in ..."
// (never a bare 0.0%), and the difference in groups crossing nodes. Empty with fewer than two plans.
std::string why_winner(const PlanSearch& search, const Cluster& cluster, const Workload& workload);

// plan --failures: the search re-ranked by expected goodput (reliability/goodput_ranking.h).
// JSON: plan_search_to_json of the re-ranked plans, each with "failures":
// {"checkpoint_interval_steps", "checkpoint_interval_s", "checkpoint_write_s",
//  "checkpoint_blocking_s", "checkpoint_load_s", "checkpoint_gb", "checkpoint_writers", "restart_s",
//  "mtbf_h", "young_interval_s", "daly_interval_s", "optimal_interval_s",
//  "expected_goodput_fraction"}, "expected_goodput_tokens_per_s", "step_time_rank" and Megatron
// arguments with the checkpoint flags (--save-interval ...); a top-level "failures" holds the
// inputs, "walked", "exact" and the why line (which also replaces "why").
nlohmann::json goodput_ranking_to_json(const GoodputRanking& ranking, const PlanSearch& search, const ModelSpec& model,
                                       const Cluster& cluster, const Workload& workload, const FailureModel& failures);
std::string goodput_ranking_to_table(const GoodputRanking& ranking, const PlanSearch& search, const ModelSpec& model,
                                     const Cluster& cluster, const Workload& workload, const FailureModel& failures,
                                     double memory_limit_gib);
// "A ranks above the fastest plan B under failures: ..." or "the fastest plan A also has the best
// expected goodput: ..."; empty without plans.
std::string why_goodput_winner(const GoodputRanking& ranking);
// The checkpoint flags a plan --failures export adds (export/megatron_launch.h).
MegatronCheckpointing megatron_checkpointing(const FailureOutcome& outcome, const FailureModel& failures);

// A plan over pools of different GPUs (search/mixed_planner.h).
nlohmann::json mixed_plan_to_json(const MixedPlan& plan, const MixedCluster& cluster, const ModelSpec& model,
                                  const Workload& workload);
std::string mixed_plan_to_table(const MixedPlan& plan, const MixedCluster& cluster, const ModelSpec& model,
                                const Workload& workload);


}  // namespace tessera
