// A plan search (search/planner.h) as stable JSON and as the human table, with the reason the
// winner beats the runner-up.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "search/mixed_planner.h"
#include "search/planner.h"

namespace tessera {

nlohmann::json plan_search_to_json(const PlanSearch& search, const ModelSpec& model, const Workload& workload);
std::string plan_search_to_table(const PlanSearch& search, const ModelSpec& model, const Cluster& cluster,
                                 const Workload& workload, double memory_limit_gib);
// "tp=8,pp=8 beats tp=4,pp=16 by 0.41 s (2.1%): pipeline bubble 0.30 s less, ..." (empty if < 2).
std::string why_winner(const PlanSearch& search, const Workload& workload);

// A plan over pools of different GPUs (search/mixed_planner.h).
nlohmann::json mixed_plan_to_json(const MixedPlan& plan, const MixedCluster& cluster, const ModelSpec& model,
                                  const Workload& workload);
std::string mixed_plan_to_table(const MixedPlan& plan, const MixedCluster& cluster, const ModelSpec& model,
                                const Workload& workload);

// --fix "tp=8,recompute=full,...": the searched keys tp, pp, cp, ep, etp, vpp, mb, recompute,
// recompute_layers, recompute_modules (pins recompute=selective), sp, zero, precision, fp8_recipe and
// fp8_param_gather=1 (pin precision=fp8), dispatcher, overlap_ep, delay_wgrad (=1 pins overlap_ep);
// and the switches every candidate runs with: capacity_factor, force_balance, reshard, flash,
// overlap_grad, overlap_param, overlap_tp, overlap_p2p, p2p_sg.
PlanConstraints parse_constraints(const std::string& text);

}  // namespace tessera
