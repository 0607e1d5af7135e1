// Megatron-LM command-line arguments read back into a plan (the writer is export/megatron_launch.h).
// The round trip plan -> args -> plan is exact for every field Megatron can express.
#pragma once

#include <string>
#include <vector>

#include "formats/plan_text.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// Reads the parallelism, batch, recompute, precision and overlap flags back into a plan validated
// against the model and cluster; model-shape flags are accepted and ignored. Unknown flags are
// an Error naming them.
PlanRequest plan_from_megatron_args(const std::vector<std::string>& args, const ModelSpec& model,
                                    const Cluster& cluster);

}  // namespace tessera
