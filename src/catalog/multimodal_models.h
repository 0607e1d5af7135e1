// The built-in multimodal models (data/multimodal/*.json) and --model's resolution for them: a
// built-in name (forgiving: catalog/name_match.h) or a multimodal model JSON file.
#pragma once

#include <string>
#include <vector>

#include "model/multimodal_spec.h"

namespace tessera {

std::vector<std::string> builtin_multimodal_names();
// A built-in multimodal name, or a JSON file with a "modules" list.
bool is_multimodal_model(const std::string& name_or_path);
MultimodalSpec load_multimodal_model(const std::string& name_or_path);  // throws Error("model", ...)

}  // namespace tessera
