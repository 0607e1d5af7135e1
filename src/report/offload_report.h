// The offload ladder of a plan search (search/offload_search.h) for people and as JSON: which
// placements were tried, the leanest plan of each against the memory limit, so every offloaded
// tier says why it was needed (the step before it did not fit).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "search/offload_search.h"

namespace tessera {

// Empty when nothing was offloaded and nothing pinned (the plain search found plans). Otherwise:
//   "offload: no plan fits with every tensor on the GPUs (leanest 98.1 GiB per GPU, limit 72.0)
//      optimizer to cpu: leanest plan 31.2 GiB per GPU: fits"
std::string offload_steps_text(const OffloadSearch& search, double memory_limit_bytes);
// [{"optimizer": "cpu", "params": "gpu", "activations": "gpu", "min_peak_gib": ..., "fits": bool, "pinned": bool}, ...]
nlohmann::json offload_steps_to_json(const OffloadSearch& search);

}  // namespace tessera
