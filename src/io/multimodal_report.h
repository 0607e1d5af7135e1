// The multimodal planner's output: a table for people, and the planner's JSON document with each
// plan's module groups, the monolithic baseline and the backbone-only MFU.
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
