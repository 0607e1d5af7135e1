// The multimodal planner's output: a table for people, and the planner's JSON document with each
// plan's module groups, the monolithic baseline, the colocated plan ("colocated": its modules'
// "own_layout", "module_phases_s", "boundary_s"), the backbone-only MFU, and the winner with its
// margin over the runner-up ("runner_up", "margin_over_runner_up": the runner-up's step time over
// the winner's, less one; null with fewer than two strategies).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "hardware/cluster.h"
#include "model/multimodal_spec.h"
#include "plan/data_mix.h"
#include "search/multimodal_planner.h"

namespace tessera {

nlohmann::json multimodal_search_to_json(const MultimodalSearch& search, const MultimodalSpec& model,
                                         const DataMix& mix, const Cluster& cluster);
std::string multimodal_search_to_table(const MultimodalSearch& search, const MultimodalSpec& model,
                                       const DataMix& mix, const Cluster& cluster);

}  // namespace tessera
