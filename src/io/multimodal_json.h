// Multimodal model JSON (data/multimodal/*.json, README "Input formats") -> MultimodalSpec.
//
// {"name", "source", "modules": [module, ...]}; a module is {"name", "role": encoder | projector |
// backbone | generator, ...} plus, for encoders and generators, the transformer keys of a Tessera
// model JSON (layers, hidden, ffn_hidden, heads, mlp, ...; no vocab); encoders add "modality"
// (image | audio), "patch_px" or "frames_per_s", "merge"; generators "tokens_per_output",
// "steps_per_output"; any module "extra_parameters" and "trainable". A projector is {"modality",
// "input_width", "layers", "ffn_hidden", "hidden"}. The backbone is either inline transformer keys
// or {"model": "<zoo name or model JSON path>"}.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/multimodal_spec.h"

namespace tessera {

MultimodalSpec multimodal_from_json(const nlohmann::json& j, const std::string& path = "model");
std::vector<std::string> builtin_multimodal_names();
// A built-in multimodal name, or a JSON file with a "modules" list.
bool is_multimodal_model(const std::string& name_or_path);
MultimodalSpec load_multimodal_model(const std::string& name_or_path);  // throws Error("model", ...)

}  // namespace tessera
