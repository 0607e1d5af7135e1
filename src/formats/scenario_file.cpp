#include "formats/scenario_file.h"

#include <algorithm>
#include <filesystem>

#include "core/error.h"
#include "formats/json_fields.h"

namespace tessera {

using namespace json_fields;

namespace {

constexpr const char* kStepTimeScaleKeys[] = {"all", "tp", "pp", "cp", "ep", "vpp", "zero1", "zero3"};

double* step_time_scale_field(StepTimeScale& s, const std::string& key) {
  if (key == "all") return &s.all;
  if (key == "tp") return &s.tp;
  if (key == "pp") return &s.pp;
  if (key == "cp") return &s.cp;
  if (key == "ep") return &s.ep;
  if (key == "vpp") return &s.vpp;
  if (key == "zero1") return &s.zero1;
  if (key == "zero3") return &s.zero3;
  return nullptr;
}

std::string builtin_list() {
  std::string list;
  for (const std::string& name : all_builtin_scenario_names()) list += name + ", ";
  return list + "or a scenario JSON file";
}

}  // namespace

NoiseScaleScenario scenario_from_json(const nlohmann::json& j, const std::string& path) {
  require_object(j, path);
  reject_unknown_keys(j, path,
                      {"name", "description", "seq_len", "token_budget", "reference_batch", "min_batch", "max_batch",
                       "noise_scale", "network_bandwidth_scale", "step_time_scale", "step_time_jitter",
                       "gradient_noise_dimension", "seed"});
  NoiseScaleScenario s;
  s.name = get_string_or(j, "name", path, "custom");
  s.description = get_string_or(j, "description", path, "");
  s.seq_len = get_int(j, "seq_len", path);
  s.token_budget = get_number(j, "token_budget", path);
  if (s.seq_len < 1) throw Error(path + ".seq_len", "got " + std::to_string(s.seq_len), "a positive integer");
  const BatchBounds bounds = default_batch_bounds(s.seq_len);
  s.reference_batch = get_int_or(j, "reference_batch", path, bounds.reference_batch);
  s.min_batch = get_int_or(j, "min_batch", path, bounds.min_batch);
  s.max_batch = get_int_or(j, "max_batch", path, bounds.max_batch);
  if (!has(j, "noise_scale") || !j.at("noise_scale").is_array())
    throw Error(path + ".noise_scale", "missing or not an array", "[{\"tokens\": T, \"noise_scale_tokens\": B}, ...]");
  const auto& points = j.at("noise_scale");
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string p = path + ".noise_scale[" + std::to_string(i) + "]";
    require_object(points[i], p);
    reject_unknown_keys(points[i], p, {"tokens", "noise_scale_tokens"});
    s.noise_scale.push_back(
        NoiseScalePoint{get_number(points[i], "tokens", p), get_number(points[i], "noise_scale_tokens", p)});
  }
  s.network_bandwidth_scale = get_number_or(j, "network_bandwidth_scale", path, s.network_bandwidth_scale);
  if (has(j, "step_time_scale")) {
    const auto& scales = j.at("step_time_scale");
    const std::string p = path + ".step_time_scale";
    require_object(scales, p);
    reject_unknown_keys(scales, p, {"all", "tp", "pp", "cp", "ep", "vpp", "zero1", "zero3"});
    for (const auto& item : scales.items())
      *step_time_scale_field(s.step_time_scale, item.key()) = get_number(scales, item.key().c_str(), p);
  }
  s.step_time_jitter = get_number_or(j, "step_time_jitter", path, s.step_time_jitter);
  s.gradient_noise_dimension = get_number_or(j, "gradient_noise_dimension", path, s.gradient_noise_dimension);
  const std::int64_t seed = get_int_or(j, "seed", path, static_cast<std::int64_t>(s.seed));
  if (seed < 0) throw Error(path + ".seed", "got " + std::to_string(seed), "an integer >= 0");
  s.seed = static_cast<std::uint64_t>(seed);
  s.validate();  // errors name "scenario.<field>", the file's keys
  return s;
}

nlohmann::json scenario_to_json(const NoiseScaleScenario& s) {
  nlohmann::json points = nlohmann::json::array();
  for (const NoiseScalePoint& p : s.noise_scale) points.push_back({{"tokens", p.tokens}, {"noise_scale_tokens", p.noise_scale_tokens}});
  nlohmann::json scales = nlohmann::json::object();
  StepTimeScale copy = s.step_time_scale;
  for (const char* key : kStepTimeScaleKeys) {
    const double value = *step_time_scale_field(copy, key);
    if (value != 1.0) scales[key] = value;
  }
  return {{"name", s.name},
          {"description", s.description},
          {"seq_len", s.seq_len},
          {"token_budget", s.token_budget},
          {"reference_batch", s.reference_batch},
          {"min_batch", s.min_batch},
          {"max_batch", s.max_batch},
          {"noise_scale", points},
          {"network_bandwidth_scale", s.network_bandwidth_scale},
          {"step_time_scale", scales},
          {"step_time_jitter", s.step_time_jitter},
          {"gradient_noise_dimension", s.gradient_noise_dimension},
          {"seed", s.seed}};
}

NoiseScaleScenario load_scenario(const std::string& name_or_path, const ModelSpec& model, std::int64_t seq_len) {
  const auto names = all_builtin_scenario_names();
  if (std::find(names.begin(), names.end(), name_or_path) != names.end())
    return builtin_scenario(name_or_path, model, seq_len);
  if (seq_len != 0)
    throw Error("--seq", "got " + std::to_string(seq_len) + " with the scenario file '" + name_or_path + "'",
                "no --seq: a scenario file sets its own seq_len");
  std::error_code ec;
  if (!std::filesystem::is_regular_file(name_or_path, ec))
    throw Error("--scenario", "no built-in scenario or file '" + name_or_path + "'", builtin_list());
  return scenario_from_json(parse_file(name_or_path, "--scenario"), "scenario");
}

}  // namespace tessera
