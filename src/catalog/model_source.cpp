#include "catalog/model_source.h"

#include <filesystem>

#include "catalog/builtin_data.h"
#include "catalog/multimodal_models.h"
#include "catalog/name_match.h"
#include "core/error.h"
#include "formats/hf_config.h"
#include "formats/json_fields.h"
#include "formats/model_json.h"
#include "formats/multimodal_json.h"

namespace tessera {

namespace {
constexpr std::string_view kModelDir = "models/";
constexpr const char* kPathHint = ", or a model JSON / Hugging Face config.json path";

// Suggestions also cover the multimodal zoo, so "LLaVA-1.5-7b" typed where only text models are
// looked up still points at its real name.
Error unknown_model(const std::string& name) {
  std::vector<std::string> candidates = builtin_model_names();
  for (const auto& n : builtin_multimodal_names()) candidates.push_back(n);
  return unknown_name_error("model", "model", name, either_of(nearest_names(name, candidates)),
                            joined_names(builtin_model_names()) + kPathHint);
}
}  // namespace

std::vector<std::string> builtin_model_names() { return builtin_json_names(kModelDir); }

std::optional<std::string> builtin_model_name(const std::string& name) {
  const auto names = builtin_model_names();
  if (const auto index = match_name(name, names, "model")) return names[*index];
  return std::nullopt;
}

ModelSpec builtin_model(const std::string& name) {
  const auto resolved = builtin_model_name(name);
  if (!resolved) throw unknown_model(name);
  const auto* file = find_builtin_file(std::string(kModelDir) + *resolved + std::string(kJsonSuffix));
  auto j = json_fields::parse(std::string(file->text), "model '" + *resolved + "'");
  return model_from_json(j, "model");
}

ModelSpec load_model(const std::string& name_or_path) {
  if (name_or_path.empty()) throw Error("model", "empty", joined_names(builtin_model_names()) + kPathHint);
  if (find_builtin_file(std::string(kModelDir) + name_or_path + std::string(kJsonSuffix)))
    return builtin_model(name_or_path);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(name_or_path, ec)) {
    if (builtin_model_name(name_or_path)) return builtin_model(name_or_path);
    throw unknown_model(name_or_path);
  }
  auto j = json_fields::parse_file(name_or_path, "model");
  if (j.is_object() && (j.contains("architectures") || j.contains("model_type")))
    return model_from_hf_config(j, hf_model_name(j, name_or_path));
  return model_from_json(j, "model");
}

}  // namespace tessera
