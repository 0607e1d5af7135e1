#include "formats/multimodal_json.h"


#include "core/error.h"
#include "formats/json_fields.h"
#include "formats/model_json.h"

namespace tessera {

using namespace json_fields;

namespace {
// Encoders and generators have no token vocabulary; ModelSpec wants one, so they get a single
// placeholder row that no count uses.
constexpr std::int64_t kNoVocabulary = 1;
// Their context: longer than any item they embed (a 100k px image is 51M patches at 14 px).
constexpr std::int64_t kModuleContext = 100'000'000;

const std::vector<std::string> kModuleKeys = {"name", "role", "modality", "patch_px", "frames_per_s", "merge",
                                              "input_width", "tokens_per_output", "steps_per_output",
                                              "extra_parameters", "trainable", "model", "source"};

ModuleSpec module_from_json(const nlohmann::json& j, const BackboneModelSource& backbone_model,
                            const std::string& path) {
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
    m.transformer = backbone_model(get_string(j, "model", path));
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

MultimodalSpec multimodal_from_json(const nlohmann::json& j, const BackboneModelSource& backbone_model,
                                    const std::string& path) {
  require_object(j, path);
  reject_unknown_keys(j, path, {"name", "source", "notes", "modules"});
  MultimodalSpec spec;
  spec.name = get_string_or(j, "name", path, "custom");
  spec.source = get_string_or(j, "source", path, "");
  if (!has(j, "modules") || !j.at("modules").is_array())
    throw Error(path + ".modules", "missing or not a list", "a list of module objects");
  std::size_t index = 0;
  for (const auto& m : j.at("modules")) spec.modules.push_back(module_from_json(m, backbone_model, path + ".modules[" + std::to_string(index++) + "]"));
  spec.validate();
  return spec;
}

}  // namespace tessera
