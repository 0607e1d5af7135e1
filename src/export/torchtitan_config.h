// A plan as a torchtitan job configuration.
#pragma once

#include <string>

#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// torchtitan job config ([parallelism], [training], [activation_checkpoint], [float8]).
std::string torchtitan_toml(const ModelSpec& model, const Plan& plan, const Workload& workload);

}  // namespace tessera
