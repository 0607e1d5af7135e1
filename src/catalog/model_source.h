// Resolves a --model argument: a built-in zoo name (case and '-', '_', ' ' ignored:
// "Llama-3-70B" is llama3-70b), a Tessera model JSON file, or a Hugging Face config.json
// (recognised by its "architectures" / "model_type" keys).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/model_spec.h"

namespace tessera {

ModelSpec load_model(const std::string& name_or_path);
std::vector<std::string> builtin_model_names();
// The zoo name `name` means (exact, or equal up to case and separators); nullopt if none.
std::optional<std::string> builtin_model_name(const std::string& name);
// Throws Error("model", "unknown model 'x'; did you mean y?", <names>) if unknown.
ModelSpec builtin_model(const std::string& name);

}  // namespace tessera
