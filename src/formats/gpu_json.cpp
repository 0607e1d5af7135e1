#include "formats/gpu_json.h"

#include <algorithm>
#include <cctype>

#include "core/checks.h"
#include "core/error.h"
#include "formats/json_fields.h"
#include "formats/schema.h"
#include "hardware/physical_ranges.h"

namespace tessera {

using namespace json_fields;

namespace {

constexpr const char* kGpusKey = "gpus";
constexpr const char* kFileField = "gpu_file";
// GPUs of one file: each is checked against every other's names, so the check is quadratic; the
// catalog holds 10, and 1,024 register in well under a second.
constexpr std::size_t kMaxGpusPerFile = 1024;

std::vector<std::string> gpu_string_list(const Json& j, const char* key, const std::string& path) {
  std::vector<std::string> out;
  if (!has(j, key)) return out;
  const Json& list = j.at(key);
  const std::string field = path + "." + key;
  if (!list.is_array()) throw Error(field, "expected a list of strings, got " + excerpt(list), "[\"name\", ...]");
  for (const auto& item : list) {
    if (!item.is_string()) throw Error(field, "expected a string, got " + excerpt(item), "[\"name\", ...]");
    out.push_back(item.get<std::string>());
  }
  return out;
}

// The cluster shorthand KEY:COUNT+KEY:COUNT splits at ':' and '+', so a name holds neither.
void require_shorthand_name(const std::string& name, const std::string& field) {
  const bool plain = !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-';
  });
  const bool named = std::any_of(name.begin(), name.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
  if (!plain || !named)
    throw Error(field, excerpt(Json(name)) + " is not a plain name",
                "letters, digits, '.', '_', '-', with at least one letter or digit (the cluster shorthand "
                "GPU:COUNT+GPU:COUNT splits at ':' and '+')");
}

std::string read_family(const Json& j, const std::string& p) {
  const std::string family = get_string_or(j, "family", p, std::string(kCustomGpuFamily));
  for (const std::string_view known : kGpuFamilies)
    if (family == known) return family;
  std::string allowed;
  for (const std::string_view known : kGpuFamilies) allowed += (allowed.empty() ? "" : ", ") + std::string(known);
  throw Error(p + ".family", "unknown value " + excerpt(Json(family)), allowed + " (custom: efficiencies of your own)");
}

void read_identity(const Json& j, const std::string& p, const std::string& origin, GpuSpec& g) {
  g.name = get_string_or(j, "name", p, g.key);
  g.family = read_family(j, p);
  g.source = get_string_or(j, "source", p, "custom GPU from " + origin);
  g.aliases = gpu_string_list(j, "aliases", p);
  for (const auto& alias : g.aliases) require_shorthand_name(alias, p + ".aliases");
}

void read_figures(const Json& j, const std::string& p, GpuSpec& g) {
  g.bf16_tflops = get_number(j, "bf16_tflops", p);
  g.fp8_tflops = get_number_or(j, "fp8_tflops", p, 0.0);
  g.mxfp8 = get_bool_or(j, "mxfp8", p, false);
  g.hbm_gib = get_number(j, "hbm_gib", p);
  g.hbm_tbps = get_number(j, "hbm_tbps", p);
  g.nvlink_gbps = get_number(j, "nvlink_gbps", p);
  const std::int64_t per_node = get_int(j, "gpus_per_node", p);
  require_positive(p + ".gpus_per_node", per_node, physical::kMaxGpusPerNode);  // before narrowing to int
  g.gpus_per_node = static_cast<int>(per_node);
  g.network_gbps_per_gpu = get_number(j, "network_gbps_per_gpu", p);
  g.usable_memory_gib = get_number(j, "usable_memory_gib", p);
}

void read_efficiencies(const Json& j, const std::string& p, GpuSpec& g) {
  g.gemm_efficiency = get_number(j, "gemm_efficiency", p);
  g.fp8_gemm_efficiency = get_number(j, "fp8_gemm_efficiency", p);
  g.gemm_half_dim = get_number(j, "gemm_half_dim", p);
  g.attention_efficiency = get_number(j, "attention_efficiency", p);
  // Optional: a GPU without fused-attention sweeps runs every call at attention_efficiency.
  g.attention_half_seq = get_number_or(j, "attention_half_seq", p, 0.0);
  g.attention_half_tiles = get_number_or(j, "attention_half_tiles", p, 0.0);
  g.attention_half_head_dim = get_number_or(j, "attention_half_head_dim", p, 0.0);
  g.hbm_efficiency = get_number(j, "hbm_efficiency", p);
  g.nvlink_efficiency = get_number(j, "nvlink_efficiency", p);
  g.network_efficiency = get_number(j, "network_efficiency", p);
  // The refittable terms: optional, defaulting to the cost model's shared constants, so a GPU
  // file without them (data/gpus.json, a user's file) prices exactly as before calibration.
  g.kernel_overhead_s = get_number_or(j, "kernel_overhead_s", p, kDefaultKernelOverheadS);
  g.host_op_dispatch_s = get_number_or(j, "host_op_dispatch_s", p, kDefaultHostOpDispatchS);
  g.nvlink_latency_s = get_number_or(j, "nvlink_latency_s", p, kDefaultNvlinkLatencyS);
  g.network_latency_s = get_number_or(j, "network_latency_s", p, kDefaultNetworkLatencyS);
  g.all_to_all_efficiency = get_number_or(j, "all_to_all_efficiency", p, kDefaultAllToAllEfficiency);
  g.moe_dispatch_efficiency = get_number_or(j, "moe_dispatch_efficiency", p, kDefaultMoeDispatchEfficiency);
  g.host_overlap_exponent = get_number_or(j, "host_overlap_exponent", p, kDefaultHostOverlapExponent);
  g.memory_reserve_gib = get_number_or(j, "memory_reserve_gib", p, 0.0);
}

}  // namespace

GpuSpec gpu_from_json(const Json& j, const std::string& path, const std::string& origin) {
  require_object(j, path);
  GpuSpec g;
  g.key = get_string(j, "key", path);
  require_shorthand_name(g.key, path + ".key");
  const std::string p = path + "." + g.key;
  reject_unknown_keys(j, p, {"key", "name", "family", "source", "aliases", "bf16_tflops", "fp8_tflops",
                             "mxfp8", "hbm_gib", "hbm_tbps", "nvlink_gbps", "gpus_per_node",
                             "network_gbps_per_gpu", "usable_memory_gib", "gemm_efficiency",
                             "fp8_gemm_efficiency", "gemm_half_dim", "attention_efficiency",
                             "attention_half_seq", "attention_half_tiles", "attention_half_head_dim",
                             "hbm_efficiency", "nvlink_efficiency", "network_efficiency",
                             "kernel_overhead_s", "host_op_dispatch_s", "nvlink_latency_s",
                             "network_latency_s", "all_to_all_efficiency", "moe_dispatch_efficiency", "host_overlap_exponent",
                             "memory_reserve_gib", "host"});
  read_identity(j, p, origin, g);
  read_figures(j, p, g);
  read_efficiencies(j, p, g);
  if (has(j, "host")) g.host = host_from_json(j.at("host"), p + ".host", {});
  g.validate();
  return g;
}

std::vector<GpuSpec> gpus_from_json(const Json& j, const std::string& origin) {
  std::vector<GpuSpec> out;
  const Json* list = &j;
  if (j.is_object() && has(j, kGpusKey)) {
    reject_unknown_keys(j, kFileField, {"schema_version", "about", "notes", "efficiency_sources",
                                        "families_and_aliases", kGpusKey});
    if (has(j, "schema_version") && get_int(j, "schema_version", kFileField) != kSchemaVersion)
      throw Error(std::string(kFileField) + ".schema_version", "got " + std::to_string(get_int(j, "schema_version", kFileField)),
                  std::to_string(kSchemaVersion) + " (tessera gpus --json)");
    list = &j.at(kGpusKey);
  }
  if (list->is_object()) {
    out.push_back(gpu_from_json(*list, "gpu", origin));
    return out;
  }
  if (!list->is_array() || list->empty())
    throw Error(kFileField, "expected a GPU object, a non-empty list of them or {\"gpus\": [...]}",
                "{\"key\": ..., \"bf16_tflops\": ...} (see tessera gpus --json)");
  if (list->size() > kMaxGpusPerFile)
    throw Error(kFileField, "lists " + std::to_string(list->size()) + " GPUs",
                "at most " + std::to_string(kMaxGpusPerFile) + " GPUs in one file");
  for (const auto& item : *list) out.push_back(gpu_from_json(item, "gpu", origin));
  return out;
}

nlohmann::json gpu_to_json(const GpuSpec& g) {
  return {{"key", g.key},
          {"name", g.name},
          {"family", g.family},
          {"source", g.source},
          {"aliases", g.aliases},
          {"bf16_tflops", g.bf16_tflops},
          {"fp8_tflops", g.fp8_tflops},
          {"mxfp8", g.mxfp8},
          {"hbm_gib", g.hbm_gib},
          {"hbm_tbps", g.hbm_tbps},
          {"nvlink_gbps", g.nvlink_gbps},
          {"gpus_per_node", g.gpus_per_node},
          {"network_gbps_per_gpu", g.network_gbps_per_gpu},
          {"gemm_efficiency", g.gemm_efficiency},
          {"fp8_gemm_efficiency", g.fp8_gemm_efficiency},
          {"gemm_half_dim", g.gemm_half_dim},
          {"attention_efficiency", g.attention_efficiency},
          {"attention_half_seq", g.attention_half_seq},
          {"attention_half_tiles", g.attention_half_tiles},
          {"attention_half_head_dim", g.attention_half_head_dim},
          {"hbm_efficiency", g.hbm_efficiency},
          {"nvlink_efficiency", g.nvlink_efficiency},
          {"network_efficiency", g.network_efficiency},
          {"usable_memory_gib", g.usable_memory_gib},
          {"kernel_overhead_s", g.kernel_overhead_s},
          {"host_op_dispatch_s", g.host_op_dispatch_s},
          {"nvlink_latency_s", g.nvlink_latency_s},
          {"network_latency_s", g.network_latency_s},
          {"all_to_all_efficiency", g.all_to_all_efficiency},
          {"moe_dispatch_efficiency", g.moe_dispatch_efficiency},
          {"host_overlap_exponent", g.host_overlap_exponent},
          {"memory_reserve_gib", g.memory_reserve_gib},
          {"host", host_to_json(g.host)}};
}

HostSpec host_from_json(const Json& j, const std::string& path, HostSpec base) {
  require_object(j, path);
  reject_unknown_keys(j, path, {"memory_gib", "link_gbps", "nvme_tb", "nvme_gbps", "cpu_adam_gparams_per_s", "source"});
  base.memory_gib = get_number_or(j, "memory_gib", path, base.memory_gib);
  base.link_gbps = get_number_or(j, "link_gbps", path, base.link_gbps);
  base.nvme_tb = get_number_or(j, "nvme_tb", path, base.nvme_tb);
  base.nvme_gbps = get_number_or(j, "nvme_gbps", path, base.nvme_gbps);
  base.cpu_adam_gparams_per_s = get_number_or(j, "cpu_adam_gparams_per_s", path, base.cpu_adam_gparams_per_s);
  base.source = get_string_or(j, "source", path, base.source);
  base.validate();
  return base;
}

nlohmann::json host_to_json(const HostSpec& h) {
  return {{"memory_gib", h.memory_gib},
          {"link_gbps", h.link_gbps},
          {"nvme_tb", h.nvme_tb},
          {"nvme_gbps", h.nvme_gbps},
          {"cpu_adam_gparams_per_s", h.cpu_adam_gparams_per_s},
          {"source", h.source}};
}

nlohmann::json gpus_to_json(const std::vector<GpuSpec>& gpus) {
  nlohmann::json out = {{"schema_version", kSchemaVersion}, {kGpusKey, nlohmann::json::array()}};
  for (const auto& g : gpus) out[kGpusKey].push_back(gpu_to_json(g));
  return out;
}

}  // namespace tessera
