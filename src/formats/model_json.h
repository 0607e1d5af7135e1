// Tessera's model JSON (data/models/*.json, documented in README "Input formats") <-> ModelSpec.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "model/model_spec.h"

namespace tessera {

// Reads and validates a Tessera model object; `path` prefixes field names in errors.
ModelSpec model_from_json(const nlohmann::json& j, const std::string& path = "model");
nlohmann::json model_to_json(const ModelSpec& model);

}  // namespace tessera
