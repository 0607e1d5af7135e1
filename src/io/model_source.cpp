#include "io/model_source.h"

#include <filesystem>

#include "core/error.h"
#include "io/builtin_data.h"
#include "io/hf_config.h"
#include "io/json_fields.h"
#include "io/model_json.h"

namespace tessera {

namespace {
constexpr std::string_view kModelDir = "models/";
constexpr std::string_view kJsonSuffix = ".json";

std::string joined_names() {
  std::string list;
  for (const auto& name : builtin_model_names()) list += (list.empty() ? "" : ", ") + name;
  return list + ", or a model JSON / Hugging Face config.json path";
}
}  // namespace

std::vector<std::string> builtin_model_names() { return builtin_json_names(kModelDir); }

ModelSpec builtin_model(const std::string& name) {
  const auto* file = find_builtin_file(std::string(kModelDir) + name + std::string(kJsonSuffix));
  if (file == nullptr) throw Error("model", "unknown model '" + name + "'", joined_names());
  auto j = json_fields::parse(std::string(file->text), "model '" + name + "'");
  return model_from_json(j, "model");
}

ModelSpec load_model(const std::string& name_or_path) {
  if (name_or_path.empty()) throw Error("model", "empty", joined_names());
  if (find_builtin_file(std::string(kModelDir) + name_or_path + std::string(kJsonSuffix)))
    return builtin_model(name_or_path);
  std::error_code ec;
  if (!std::filesystem::is_regular_file(name_or_path, ec))
    throw Error("model", "unknown model '" + name_or_path + "' (not a built-in, not a file)",
                joined_names());
  auto j = json_fields::parse_file(name_or_path, "model");
  if (j.is_object() && (j.contains("architectures") || j.contains("model_type"))) {
    auto stem = std::filesystem::path(name_or_path).parent_path().filename().string();
    return model_from_hf_config(j, stem.empty() ? "hf-model" : stem);
  }
  return model_from_json(j, "model");
}

}  // namespace tessera
