// A plan as Megatron-LM command-line arguments (pretrain_gpt.py, Megatron-Core r0.8+ flag names),
// and back. The round trip plan -> args -> plan is exact for every field Megatron can express.
#pragma once

#include <string>
#include <vector>

#include "hardware/cluster.h"
#include "io/plan_text.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

std::vector<std::string> megatron_args(const ModelSpec& model, const Plan& plan, const Workload& workload);
// One line: the arguments joined with spaces (for shell scripts).
std::string megatron_command_line(const ModelSpec& model, const Plan& plan, const Workload& workload);

// Reads the parallelism, batch, recompute, precision and overlap flags back into a plan validated
// against the model and cluster; model-shape flags are accepted and ignored. Unknown flags are
// an Error naming them.
PlanRequest plan_from_megatron_args(const std::vector<std::string>& args, const ModelSpec& model,
                                    const Cluster& cluster);

// torchtitan job config ([parallelism], [training], [activation_checkpoint], [float8]).
std::string torchtitan_toml(const ModelSpec& model, const Plan& plan, const Workload& workload);

}  // namespace tessera
