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
// The same with "confidence" (io/accuracy_classes.h confidence_to_json) for this model, cluster,
// plan and workload.
nlohmann::json estimate_to_json(const Estimate& e, const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                                const Workload& workload);
// Ends with the estimate's confidence line (io/accuracy_classes.h confidence_text).
std::string estimate_to_table(const Estimate& e, const ModelSpec& model, const Cluster& cluster,
                              const Plan& plan, const Workload& workload);

}  // namespace tessera
