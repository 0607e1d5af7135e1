// Estimate -> stable JSON (documented in README) and the human-readable table.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "cost/estimate.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

nlohmann::json estimate_to_json(const Estimate& e);
std::string estimate_to_table(const Estimate& e, const ModelSpec& model, const Cluster& cluster,
                              const Plan& plan, const Workload& workload);

}  // namespace tessera
