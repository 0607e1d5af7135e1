// The model and cluster that plan-like inputs are validated against: a MoE model (so ep, the MoE
// knobs and every other key can be valid) on 64 H100s.
#pragma once

#include "hardware/cluster.h"
#include "model/model_spec.h"

namespace tessera::fuzz {

const ModelSpec& fuzz_model();
const Cluster& fuzz_cluster();

}  // namespace tessera::fuzz
