// The co-adaptation gain map (adapt/gain_map.h) as the table of `tessera adapt map` and as JSON.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "adapt/gain_map.h"

namespace tessera {

// {"gpu", "cells": [{"model", "parameters", "gpus", "scenario", "fits", "gain" (gain_to_json) or null,
//  "batch_changes", "plan_changes", "negligible"}], "conclusion"}
nlohmann::json gain_map_to_json(const std::vector<GainMapCell>& cells, const std::string& gpu);
// Models as rows, GPU counts as columns; each cell "gain% (batch / plan)", "-" where nothing fits,
// and a closing line naming where the gain is negligible (below kWorthwhileGainFraction).
std::string gain_map_to_table(const std::vector<GainMapCell>& cells, const std::string& gpu);
// "co-adapting pays (>= 1%) for ...; it is negligible for ..." over the cells.
std::string gain_map_conclusion(const std::vector<GainMapCell>& cells);

}  // namespace tessera
