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

#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/multimodal_spec.h"

namespace tessera {

// The model a backbone's {"model": NAME} means (catalog/model_source.h load_model: a zoo name, a
// model JSON or a Hugging Face config.json); this layer reads files, the catalog knows names.
using BackboneModelSource = std::function<ModelSpec(const std::string& name_or_path)>;

MultimodalSpec multimodal_from_json(const nlohmann::json& j, const BackboneModelSource& backbone_model,
                                    const std::string& path = "model");

}  // namespace tessera
