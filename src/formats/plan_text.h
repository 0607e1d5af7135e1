// The --plan argument: shorthand "tp=8,pp=8,mb=1,gbs=1536,seq=2048,recompute=full,sp=1,zero=1"
// or a JSON file with the same keys ({"tp": 8, "recompute": "full", ...}). Missing keys take
// their defaults: dp from the GPU count, cp = ep = vpp = mb = 1, recompute none, zero none,
// sp on when tp > 1, bf16, overlaps on (TP overlap off), seq = the model's context. gbs is required.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

struct PlanRequest {
  Plan plan;
  Workload workload;
};

// Parses and validates against the model and cluster (validate_plan); errors name the key.
PlanRequest load_plan(const std::string& shorthand_or_path, const ModelSpec& model,
                      const Cluster& cluster);
PlanRequest plan_from_json(const nlohmann::json& j, const ModelSpec& model, const Cluster& cluster);
nlohmann::json plan_to_json(const Plan& plan, const Workload& workload);
std::string plan_to_shorthand(const Plan& plan, const Workload& workload);
// "a=1, b = x,,c=2" -> {a: 1, b: x, c: 2} in order: comma-separated key=value pairs, spaces
// around keys and values ignored (issue 32: "tp=1, mb=1" was refused), empty items skipped.
// Error(field, "'x' is not key=value", allowed); Error(field.key, "given twice", "each key once").
std::vector<std::pair<std::string, std::string>> key_value_items(const std::string& text, const std::string& field,
                                                                 const std::string& allowed);

// A switch value: 1/0, true/false, yes/no, on/off; anything else is an error naming key.
bool parse_switch(const std::string& key, const std::string& text);

}  // namespace tessera
