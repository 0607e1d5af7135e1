// Estimate -> stable JSON (documented in README) and the human-readable table.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cost/estimate.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

nlohmann::json estimate_to_json(const Estimate& e);
// {"stage", "weights_gib", "gradients_gib", "optimizer_gib", "activations_gib", "logits_gib",
//  "buffers_gib", "framework_gib"}: one stage's memory.
nlohmann::json memory_to_json(const MemoryBreakdown& memory, int stage);
// Every stage's memory_to_json plus "total_gib", stage 0 first (`estimate --json`'s "stage_memory").
nlohmann::json stage_memories_to_json(const std::vector<MemoryBreakdown>& stages);
// The same with "confidence" (evaluation/accuracy_classes.h confidence_to_json) for this model, cluster,
// plan and workload.
nlohmann::json estimate_to_json(const Estimate& e, const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                                const Workload& workload);
// Ends with the estimate's confidence line (evaluation/accuracy_classes.h confidence_text).
std::string estimate_to_table(const Estimate& e, const ModelSpec& model, const Cluster& cluster,
                              const Plan& plan, const Workload& workload);

}  // namespace tessera
