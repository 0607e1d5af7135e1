// A plan as Megatron-LM command-line arguments (pretrain_gpt.py, Megatron-Core flag names). The
// reverse direction (arguments read back into a plan) is io/megatron_args.h.
#pragma once

#include <string>
#include <vector>

#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

std::vector<std::string> megatron_args(const ModelSpec& model, const Plan& plan, const Workload& workload);
// One line: the arguments joined with spaces (for shell scripts).
std::string megatron_command_line(const ModelSpec& model, const Plan& plan, const Workload& workload);

}  // namespace tessera
