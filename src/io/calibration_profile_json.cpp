#include "io/calibration_profile_json.h"

#include "core/error.h"
#include "io/json_fields.h"

namespace tessera {

using namespace json_fields;

namespace {

nlohmann::json gpu_parameters(const GpuSpec& gpu) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& p : calibration_parameters()) out[std::string(p.name)] = gpu.*p.field;
  return out;
}

nlohmann::json parameter_json(const ParameterFit& p) {
  const CalibrationParameter* def = find_calibration_parameter(p.name);
  return {{"gpu", p.gpu_key},
          {"name", p.name},
          {"term", def ? std::string(parameter_term_name(def->term)) : ""},
          {"cost_term", def ? std::string(def->cost_term) : ""},
          {"catalog", p.catalog},
          {"fitted", p.fitted},
          {"uncertainty", p.uncertainty},
          {"status", std::string(parameter_status_name(p.status))},
          {"bounds", {p.lower, p.upper}}};
}

nlohmann::json measurement_json(const MeasurementFit& m) {
  return {{"id", m.id},
          {"kind", m.kind},
          {"gpu", m.gpu_key},
          {"measured", m.measured},
          {"before", m.before},
          {"after", m.after},
          {"error_before_pct", m.error_before_pct()},
          {"error_after_pct", m.error_after_pct()}};
}

}  // namespace

nlohmann::json profile_to_json(const CalibrationProfile& profile, const ProfileInputs& inputs) {
  nlohmann::json gpus = nlohmann::json::array(), params = nlohmann::json::array(),
                 rows = nlohmann::json::array();
  for (const auto& g : profile.gpus) gpus.push_back({{"key", g.key}, {"parameters", gpu_parameters(g)}});
  for (const auto& p : profile.parameters) params.push_back(parameter_json(p));
  for (const auto& m : profile.measurements) rows.push_back(measurement_json(m));
  return {{"schema_version", kProfileSchemaVersion},
          {"kind", kProfileKind},
          {"gpus", gpus},
          {"fitted_on",
           {{"runs", inputs.runs}, {"collectives", inputs.collectives}, {"gemms", inputs.gemms}, {"inputs", inputs.files}}},
          {"parameters", params},
          {"measurements", rows},
          {"summary",
           {{"median_abs_error_before_pct", profile.median_abs_error_before_pct},
            {"median_abs_error_after_pct", profile.median_abs_error_after_pct}}}};
}

LoadedProfile profile_from_json(const nlohmann::json& j, const std::string& file) {
  const std::string root = "profile";
  require_object(j, root);
  reject_unknown_keys(j, root, {"schema_version", "kind", "gpus", "fitted_on", "parameters", "measurements", "summary"});
  if (const std::string kind = get_string(j, "kind", root); kind != kProfileKind)
    throw Error(root + ".kind", "got '" + kind + "'", kProfileKind);
  if (get_int(j, "schema_version", root) != kProfileSchemaVersion)
    throw Error(root + ".schema_version", std::to_string(get_int(j, "schema_version", root)),
                std::to_string(kProfileSchemaVersion));
  if (!has(j, "gpus") || !j.at("gpus").is_array())
    throw Error(root + ".gpus", "missing or not a list", "[{\"key\": ..., \"parameters\": {...}}]");
  LoadedProfile out;
  out.file = file;
  for (std::size_t i = 0; i < j.at("gpus").size(); ++i) {
    const auto& g = j.at("gpus")[i];
    const std::string path = root + ".gpus[" + std::to_string(i) + "]";
    require_object(g, path);
    reject_unknown_keys(g, path, {"key", "parameters"});
    CalibratedGpu gpu;
    gpu.key = get_string(g, "key", path);
    if (!has(g, "parameters") || !g.at("parameters").is_object())
      throw Error(path + ".parameters", "missing or not an object", "{\"gemm_efficiency\": 0.7, ...}");
    for (const auto& [name, value] : g.at("parameters").items()) {
      if (!find_calibration_parameter(name)) {
        std::string names;
        for (const auto& p : calibration_parameters()) names += (names.empty() ? "" : ", ") + std::string(p.name);
        throw Error(path + ".parameters." + name, "unknown parameter", names);
      }
      gpu.parameters[name] = get_number(g.at("parameters"), name.c_str(), path + ".parameters");
    }
    out.gpus.push_back(std::move(gpu));
  }
  if (has(j, "fitted_on") && j.at("fitted_on").is_object()) {
    const auto& f = j.at("fitted_on");
    out.inputs.runs = static_cast<std::size_t>(get_int_or(f, "runs", root + ".fitted_on", 0));
    out.inputs.collectives = static_cast<std::size_t>(get_int_or(f, "collectives", root + ".fitted_on", 0));
    out.inputs.gemms = static_cast<std::size_t>(get_int_or(f, "gemms", root + ".fitted_on", 0));
  }
  return out;
}

LoadedProfile load_profile(const std::string& path) {
  return profile_from_json(parse_file(path, "--profile " + path), path);
}

GpuSpec apply_profile(const GpuSpec& gpu, const LoadedProfile& profile) {
  GpuSpec out = gpu;
  for (const auto& g : profile.gpus) {
    if (g.key != gpu.key) continue;
    for (const auto& [name, value] : g.parameters) out.*(find_calibration_parameter(name)->field) = value;
  }
  out.validate();
  return out;
}

}  // namespace tessera

namespace tessera {

nlohmann::json profile_note_json(const LoadedProfile& profile) {
  nlohmann::json keys = nlohmann::json::array();
  for (const auto& g : profile.gpus) keys.push_back(g.key);
  return {{"file", profile.file},
          {"gpus", keys},
          {"fitted_on",
           {{"runs", profile.inputs.runs}, {"collectives", profile.inputs.collectives}, {"gemms", profile.inputs.gemms}}}};
}

std::string profile_note_text(const LoadedProfile& profile) {
  std::string keys;
  for (const auto& g : profile.gpus) keys += (keys.empty() ? "" : ", ") + g.key;
  return "calibration profile " + profile.file + " applied to " + (keys.empty() ? "no GPU" : keys) + " (fitted on " +
         std::to_string(profile.inputs.runs) + " runs, " + std::to_string(profile.inputs.collectives) +
         " collective rows, " + std::to_string(profile.inputs.gemms) + " GEMMs)\n";
}

}  // namespace tessera
