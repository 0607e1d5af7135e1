#include "io/multimodal_json.h"

#include <filesystem>
#include <optional>

#include "core/error.h"
#include "io/builtin_data.h"
#include "io/json_fields.h"
#include "io/model_json.h"
#include "io/model_source.h"
#include "io/name_match.h"

namespace tessera {

using namespace json_fields;

namespace {
constexpr std::string_view kDir = "multimodal/";
constexpr std::string_view kJsonSuffix = ".json";
// Encoders and generators have no token vocabulary; ModelSpec wants one, so they get a single
// placeholder row that no count uses.
constexpr std::int64_t kNoVocabulary = 1;
// Their context: longer than any item they embed (a 100k px image is 51M patches at 14 px).
constexpr std::int64_t kModuleContext = 100'000'000;

const std::vector<std::string> kModuleKeys = {"name", "role", "modality", "patch_px", "frames_per_s", "merge",
                                              "input_width", "tokens_per_output", "steps_per_output",
                                              "extra_parameters", "trainable", "model", "source"};

ModuleSpec module_from_json(const nlohmann::json& j, const std::string& path) {
  require_object(j, path);
  ModuleSpec m;
  m.name = get_string(j, "name", path);
  m.role = parse_module_role(get_string(j, "role", path));
  m.modality = parse_modality(get_string_or(j, "modality", path, "image"));
  m.patch_px = get_int_or(j, "patch_px", path, 0);
  m.frames_per_s = get_number_or(j, "frames_per_s", path, 0.0);
  m.merge = get_int_or(j, "merge", path, 1);
  m.input_width = get_int_or(j, "input_width", path, 0);
  m.tokens_per_output = get_int_or(j, "tokens_per_output", path, 0);
  m.steps_per_output = get_int_or(j, "steps_per_output", path, 1);
  m.extra_parameters = get_number_or(j, "extra_parameters", path, 0.0);
  m.trainable = get_bool_or(j, "trainable", path, true);
  // The rest are the module's transformer keys.
  nlohmann::json t = nlohmann::json::object();
  for (const auto& [key, value] : j.items()) {
    bool module_key = false;
    for (const auto& k : kModuleKeys) module_key = module_key || k == key;
    if (!module_key) t[key] = value;
  }
  t["name"] = m.name;
  if (m.role == ModuleRole::backbone && has(j, "model")) {
    if (t.size() > 1)
      throw Error(path + ".model", "a backbone is either a model name or inline transformer keys", "one of the two");
    m.transformer = load_model(get_string(j, "model", path));
    return m;
  }
  if (m.role == ModuleRole::projector) {
    require_object(t, path);
    reject_unknown_keys(t, path, {"name", "layers", "hidden", "ffn_hidden"});
    m.transformer.name = m.name;
    m.transformer.layers = get_int_or(t, "layers", path, 2);
    m.transformer.hidden = get_int(t, "hidden", path);
    m.transformer.ffn_hidden = get_int_or(t, "ffn_hidden", path, m.transformer.hidden);
    return m;
  }
  if (m.role != ModuleRole::backbone) {
    if (has(t, "vocab")) throw Error(path + ".vocab", "encoders and generators have no vocabulary", "omit it");
    t["vocab"] = kNoVocabulary;
    if (!has(t, "max_context")) t["max_context"] = kModuleContext;
  }
  m.transformer = model_from_json(t, path);
  return m;
}
}  // namespace

MultimodalSpec multimodal_from_json(const nlohmann::json& j, const std::string& path) {
  require_object(j, path);
  reject_unknown_keys(j, path, {"name", "source", "notes", "modules"});
  MultimodalSpec spec;
  spec.name = get_string_or(j, "name", path, "custom");
  spec.source = get_string_or(j, "source", path, "");
  if (!has(j, "modules") || !j.at("modules").is_array())
    throw Error(path + ".modules", "missing or not a list", "a list of module objects");
  std::size_t index = 0;
  for (const auto& m : j.at("modules")) spec.modules.push_back(module_from_json(m, path + ".modules[" + std::to_string(index++) + "]"));
  spec.validate();
  return spec;
}

std::vector<std::string> builtin_multimodal_names() { return builtin_json_names(kDir); }

namespace {
// The built-in multimodal model a name means: exact, else case- and separator-insensitive
// (io/name_match.h); nullopt when it names none (a file path, or unknown).
std::optional<std::string> builtin_multimodal_name(const std::string& name) {
  const auto names = builtin_multimodal_names();
  if (const auto index = match_name(name, names, "model")) return names[*index];
  return std::nullopt;
}
MultimodalSpec builtin_multimodal_model(const std::string& name) {
  const auto* file = find_builtin_file(std::string(kDir) + name + std::string(kJsonSuffix));
  return multimodal_from_json(parse(std::string(file->text), "model '" + name + "'"), "model");
}
bool is_regular_file(const std::string& path) {
  std::error_code ec;
  return !path.empty() && std::filesystem::is_regular_file(path, ec);
}
}  // namespace

bool is_multimodal_model(const std::string& name_or_path) {
  if (find_builtin_file(std::string(kDir) + name_or_path + std::string(kJsonSuffix))) return true;
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
  if (find_builtin_file(std::string(kDir) + name_or_path + std::string(kJsonSuffix)))
    return builtin_multimodal_model(name_or_path);
  if (is_regular_file(name_or_path)) return multimodal_from_json(parse_file(name_or_path, "model"), "model");
  if (const auto resolved = builtin_multimodal_name(name_or_path)) return builtin_multimodal_model(*resolved);
  const auto names = builtin_multimodal_names();
  throw unknown_name_error("model", "multimodal model", name_or_path, either_of(nearest_names(name_or_path, names)),
                           joined_names(names) + ", or a multimodal model JSON path");
}

}  // namespace tessera
