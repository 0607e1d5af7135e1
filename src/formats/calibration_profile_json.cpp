#include "formats/calibration_profile_json.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "core/units.h"
#include "formats/json_fields.h"

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

// The measured GEMM table of a GPU entry: {"m", "n", "k", "dtype": "bf16" | "fp8", "tflops"}.
nlohmann::json measured_gemms_json(const std::vector<MeasuredGemm>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const MeasuredGemm& g : rows)
    out.push_back({{"m", g.m}, {"n", g.n}, {"k", g.k}, {"dtype", g.fp8 ? "fp8" : "bf16"}, {"tflops", g.tflops}});
  return out;
}

MeasuredGemm measured_gemm_from_json(const nlohmann::json& j, const std::string& path) {
  require_object(j, path);
  reject_unknown_keys(j, path, {"m", "n", "k", "dtype", "tflops"});
  const auto dimension = [&](const char* key) {
    const double d = get_number(j, key, path);
    if (d < 1 || std::floor(d) != d) throw Error(path + "." + key, "got " + excerpt(j.at(key)), "a whole number >= 1");
    return d;
  };
  const double m = dimension("m"), n = dimension("n"), k = dimension("k");
  const std::string dtype = get_string(j, "dtype", path);
  if (dtype != "bf16" && dtype != "fp8") throw Error(path + ".dtype", "got '" + dtype + "'", "bf16, fp8");
  const double tflops = get_number(j, "tflops", path);
  if (!(tflops > 0)) throw Error(path + ".tflops", "got " + excerpt(j.at("tflops")), "a number > 0 (up to the GPU's peak)");
  return MeasuredGemm(m, n, k, dtype == "fp8", tflops);
}

std::vector<MeasuredGemm> measured_gemms_from_json(const nlohmann::json& list, const std::string& path) {
  if (!list.is_array()) throw Error(path, "expected a list, got " + excerpt(list), "[{\"m\", \"n\", \"k\", \"dtype\", \"tflops\"}, ...]");
  std::vector<MeasuredGemm> out;
  for (std::size_t i = 0; i < list.size(); ++i) out.push_back(measured_gemm_from_json(list[i], path + "[" + std::to_string(i) + "]"));
  return out;
}

void read_node_links(const nlohmann::json& j, const std::string& path, NodeLinkOverrides& out) {
  for (const auto& f : kNodeLinkFields) {
    if (!has(j, f.name)) continue;
    const std::string field = path + "." + f.name;
    const double value = get_number(j, f.name, path);
    if (f.latency) require_node_latency_us(field, value);
    else require_link_gbps(field, value);
    out.*f.value = value;
  }
}

void read_parameters(const nlohmann::json& g, const std::string& path, CalibratedGpu& gpu) {
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
}

std::vector<std::string> profile_string_list(const nlohmann::json& list, const std::string& path, const std::string& what) {
  if (!list.is_array()) throw Error(path, "expected a list, got " + excerpt(list), "a list of strings");
  std::vector<std::string> out;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string())
      throw Error(path + "[" + std::to_string(i) + "]", "expected " + what + ", got " + excerpt(list[i]), "a string");
    out.push_back(list[i].get<std::string>());
  }
  return out;
}

// fitted_on as calibrate writes it: counts of what was fitted and the input files. It is printed
// back with the profile ("fitted on 3 runs"), so it is read as strictly as the parameters.
ProfileInputs fitted_on_from_json(const nlohmann::json& f, const std::string& path) {
  require_object(f, path);
  reject_unknown_keys(f, path, {"runs", "collectives", "gemms", "attention", "kernels", "inputs", "identified"});
  ProfileInputs out;
  const auto count = [&](const char* key) {
    const std::int64_t n = get_int_or(f, key, path, 0);
    require_non_negative(path + "." + key, n);
    return static_cast<std::size_t>(n);
  };
  out.runs = count("runs");
  out.collectives = count("collectives");
  out.gemms = count("gemms");
  out.attention = count("attention");
  out.kernels = count("kernels");
  if (has(f, "inputs")) out.files = profile_string_list(f.at("inputs"), path + ".inputs", "a file name");
  if (has(f, "identified")) out.identified = profile_string_list(f.at("identified"), path + ".identified", "a gpu.parameter name");
  return out;
}

// The records calibrate writes beside the fit (parameters, measurements: lists; summary: an
// object) are not read back, but a file whose records have another shape was not written by it.
void require_record_shapes(const nlohmann::json& j, const std::string& root) {
  for (const char* key : {"parameters", "measurements"})
    if (has(j, key) && !j.at(key).is_array())
      throw Error(root + "." + key, "expected a list, got " + excerpt(j.at(key)), "a profile written by tessera calibrate");
  if (has(j, "summary") && !j.at("summary").is_object())
    throw Error(root + ".summary", "expected an object, got " + excerpt(j.at("summary")), "a profile written by tessera calibrate");
}

}  // namespace

nlohmann::json fitted_on_json(const ProfileInputs& inputs) {
  nlohmann::json out = {{"runs", inputs.runs}, {"collectives", inputs.collectives}, {"gemms", inputs.gemms},
                        {"attention", inputs.attention}, {"kernels", inputs.kernels}, {"inputs", inputs.files}};
  if (inputs.identified) out["identified"] = *inputs.identified;
  return out;
}

nlohmann::json profile_to_json(const CalibrationProfile& profile, const ProfileInputs& inputs) {
  nlohmann::json gpus = nlohmann::json::array(), params = nlohmann::json::array(),
                 rows = nlohmann::json::array();
  for (const auto& g : profile.gpus) {
    nlohmann::json entry = {{"key", g.key}, {"parameters", gpu_parameters(g)}};
    if (!g.measured_gemms.empty()) entry["measured_gemms"] = measured_gemms_json(g.measured_gemms);
    gpus.push_back(std::move(entry));
  }
  for (const auto& p : profile.parameters) params.push_back(parameter_json(p));
  for (const auto& m : profile.measurements) rows.push_back(measurement_json(m));
  return {{"schema_version", kProfileSchemaVersion},
          {"kind", kProfileKind},
          {"gpus", gpus},
          {"fitted_on", fitted_on_json(inputs)},
          {"parameters", params},
          {"measurements", rows},
          {"summary",
           {{"median_abs_error_before_pct", profile.median_abs_error_before_pct},
            {"median_abs_error_after_pct", profile.median_abs_error_after_pct}}}};
}

LoadedProfile profile_from_json(const nlohmann::json& j, const std::string& file) {
  const std::string root = "profile";
  require_object(j, root);
  reject_unknown_keys(j, root,
                      {"schema_version", "kind", "gpus", "links", "fitted_on", "parameters", "measurements", "summary"});
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
    reject_unknown_keys(g, path, {"key", "parameters", "links", "measured_gemms"});
    CalibratedGpu gpu;
    gpu.key = get_string(g, "key", path);
    for (std::size_t earlier = 0; earlier < out.gpus.size(); ++earlier)
      if (out.gpus[earlier].key == gpu.key)
        throw Error(path + ".key", "'" + gpu.key + "' is listed already at " + root + ".gpus[" + std::to_string(earlier) + "]",
                    "each GPU once (one set of parameters per GPU)");
    // An entry that only measures links may leave its parameters out.
    if (has(g, "parameters") || !has(g, "links")) read_parameters(g, path, gpu);
    if (has(g, "links")) gpu.links = node_links_from_json(g.at("links"), path + ".links");
    if (has(g, "measured_gemms")) gpu.measured_gemms = measured_gemms_from_json(g.at("measured_gemms"), path + ".measured_gemms");
    out.gpus.push_back(std::move(gpu));
  }
  if (has(j, "links")) out.links = links_from_json(j.at("links"), root + ".links");
  if (has(j, "fitted_on")) out.inputs = fitted_on_from_json(j.at("fitted_on"), root + ".fitted_on");
  require_record_shapes(j, root);
  return out;
}

LoadedProfile load_profile(const std::string& path) {
  return profile_from_json(parse_file(path, "--profile " + path), path);
}

nlohmann::json node_links_to_json(const NodeLinkOverrides& links) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& f : kNodeLinkFields)
    if (links.*f.value) out[f.name] = *(links.*f.value);
  return out;
}

nlohmann::json links_to_json(const LinkOverrides& links) {
  nlohmann::json out = node_links_to_json(links.every_pool);
  if (links.inter_pool_gbps) out["inter_pool_gbps"] = *links.inter_pool_gbps;
  if (links.inter_pool_latency_us) out["inter_pool_latency_us"] = *links.inter_pool_latency_us;
  return out;
}

NodeLinkOverrides node_links_from_json(const nlohmann::json& j, const std::string& path) {
  require_object(j, path);
  reject_unknown_keys(j, path, {"intra_node_gbps", "inter_node_gbps", "intra_node_latency_us", "inter_node_latency_us"});
  NodeLinkOverrides out;
  read_node_links(j, path, out);
  return out;
}

LinkOverrides links_from_json(const nlohmann::json& j, const std::string& path) {
  require_object(j, path);
  reject_unknown_keys(j, path,
                      {"intra_node_gbps", "inter_node_gbps", "intra_node_latency_us", "inter_node_latency_us",
                       "inter_pool_gbps", "inter_pool_latency_us"});
  LinkOverrides out;
  read_node_links(j, path, out.every_pool);
  if (has(j, "inter_pool_gbps")) {
    out.inter_pool_gbps = get_number(j, "inter_pool_gbps", path);
    require_link_gbps(path + ".inter_pool_gbps", *out.inter_pool_gbps);
  }
  if (has(j, "inter_pool_latency_us")) {
    out.inter_pool_latency_us = get_number(j, "inter_pool_latency_us", path);
    require_inter_pool_latency_us(path + ".inter_pool_latency_us", *out.inter_pool_latency_us);
  }
  return out;
}

}  // namespace tessera
