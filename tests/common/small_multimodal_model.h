// An 8B-class multimodal model for tests: an image encoder group (ViT + projector), the
// llama3-8b backbone and a generator, small enough for brute-force checks.
#pragma once

#include <nlohmann/json.hpp>

#include "catalog/model_source.h"
#include "formats/multimodal_json.h"

namespace tessera::testing {

inline const MultimodalSpec& small_multimodal_model() {
  static const MultimodalSpec m = multimodal_from_json(nlohmann::json::parse(R"({
    "name": "test-mm-8b",
    "modules": [
      {"name": "vit", "role": "encoder", "modality": "image", "patch_px": 14,
       "layers": 24, "hidden": 1024, "ffn_hidden": 4096, "heads": 16, "mlp": "gelu", "linear_bias": true},
      {"name": "proj", "role": "projector", "modality": "image", "input_width": 1024, "layers": 2,
       "ffn_hidden": 4096, "hidden": 4096},
      {"name": "llm", "role": "backbone", "model": "llama3-8b"},
      {"name": "dit", "role": "generator", "tokens_per_output": 256,
       "layers": 28, "hidden": 1152, "ffn_hidden": 4608, "heads": 16, "mlp": "gelu", "linear_bias": true}
    ]})"), load_model);
  return m;
}

}  // namespace tessera::testing
