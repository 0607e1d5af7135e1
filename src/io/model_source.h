// Resolves a --model argument: a built-in zoo name, a Tessera model JSON file, or a Hugging Face
// config.json (recognised by its "architectures" / "model_type" keys).
#pragma once

#include <string>
#include <vector>

#include "model/model_spec.h"

namespace tessera {

ModelSpec load_model(const std::string& name_or_path);
std::vector<std::string> builtin_model_names();
ModelSpec builtin_model(const std::string& name);  // throws Error("model", ...) if unknown

}  // namespace tessera
