// The Megatron-LM arguments of a plan inside a JSON report: the argument list, or null with the
// reason when Megatron-LM cannot express the model or plan (export/megatron_launch.h refuses
// ALiBi, logit soft-capping, ...). A report must not fail because one export is impossible.
#pragma once

#include <nlohmann/json.hpp>

#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// Sets entry["megatron_args"] (a list, or null) and, when null, entry["megatron_error"].
void add_megatron_args(nlohmann::json& entry, const ModelSpec& model, const Plan& plan, const Workload& workload);

// The one-line command, or "(not expressible in Megatron-LM: <why>)" for text reports.
std::string megatron_command_or_reason(const ModelSpec& model, const Plan& plan, const Workload& workload);

}  // namespace tessera
