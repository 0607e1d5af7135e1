#include "catalog/multimodal_models.h"

#include <filesystem>
#include <optional>

#include "catalog/builtin_data.h"
#include "catalog/model_source.h"
#include "catalog/name_match.h"
#include "core/error.h"
#include "formats/json_fields.h"
#include "formats/multimodal_json.h"

namespace tessera {

using namespace json_fields;

namespace {
constexpr std::string_view kMultimodalDir = "multimodal/";
}  // namespace

std::vector<std::string> builtin_multimodal_names() { return builtin_json_names(kMultimodalDir); }

namespace {
// The built-in multimodal model a name means: exact, else case- and separator-insensitive
// (catalog/name_match.h); nullopt when it names none (a file path, or unknown).
std::optional<std::string> builtin_multimodal_name(const std::string& name) {
  const auto names = builtin_multimodal_names();
  if (const auto index = match_name(name, names, "model")) return names[*index];
  return std::nullopt;
}
MultimodalSpec builtin_multimodal_model(const std::string& name) {
  const auto* file = find_builtin_file(std::string(kMultimodalDir) + name + std::string(kJsonSuffix));
  return multimodal_from_json(parse(std::string(file->text), "model '" + name + "'"), load_model, "model");
}
bool is_regular_file(const std::string& path) {
  std::error_code ec;
  return !path.empty() && std::filesystem::is_regular_file(path, ec);
}
}  // namespace

bool is_multimodal_model(const std::string& name_or_path) {
  if (find_builtin_file(std::string(kMultimodalDir) + name_or_path + std::string(kJsonSuffix))) return true;
  if (!is_regular_file(name_or_path)) return !name_or_path.empty() && builtin_multimodal_name(name_or_path).has_value();
  try {
    const auto j = parse_file(name_or_path, "model");
    return j.is_object() && j.contains("modules");
  } catch (const Error&) {
    return false;  // load_model reports the file's problem
  }
}

MultimodalSpec load_multimodal_model(const std::string& name_or_path) {
  // An exact built-in name first, then a file, then a forgiving match.
  if (find_builtin_file(std::string(kMultimodalDir) + name_or_path + std::string(kJsonSuffix)))
    return builtin_multimodal_model(name_or_path);
  if (is_regular_file(name_or_path)) return multimodal_from_json(parse_file(name_or_path, "model"), load_model, "model");
  if (const auto resolved = builtin_multimodal_name(name_or_path)) return builtin_multimodal_model(*resolved);
  const auto names = builtin_multimodal_names();
  throw unknown_name_error("model", "multimodal model", name_or_path, either_of(nearest_names(name_or_path, names)),
                           joined_names(names) + ", or a multimodal model JSON path");
}

}  // namespace tessera
