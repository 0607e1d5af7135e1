#include "io/gpu_catalog.h"

#include <filesystem>

#include "core/checks.h"
#include "core/error.h"
#include "io/integer_text.h"
#include "io/builtin_data.h"
#include "io/json_fields.h"
#include "core/units.h"

namespace tessera {

using namespace json_fields;

namespace {

// Bounds shared with hardware/cluster.cpp's validation.
constexpr std::int64_t kMaxGpus = 10'000'000;
constexpr std::int64_t kMaxGpusPerNode = 1024;

GpuSpec gpu_from_json(const nlohmann::json& j, const std::string& path) {
  require_object(j, path);
  GpuSpec g;
  g.key = get_string(j, "key", path);
  const std::string p = path + "." + g.key;
  g.name = get_string_or(j, "name", p, g.key);
  g.bf16_tflops = get_number(j, "bf16_tflops", p);
  g.fp8_tflops = get_number_or(j, "fp8_tflops", p, 0.0);
  g.mxfp8 = get_bool_or(j, "mxfp8", p, false);
  g.hbm_gib = get_number(j, "hbm_gib", p);
  g.hbm_tbps = get_number(j, "hbm_tbps", p);
  g.nvlink_gbps = get_number(j, "nvlink_gbps", p);
  g.gpus_per_node = static_cast<int>(get_int(j, "gpus_per_node", p));
  g.network_gbps_per_gpu = get_number(j, "network_gbps_per_gpu", p);
  g.gemm_efficiency = get_number(j, "gemm_efficiency", p);
  g.fp8_gemm_efficiency = get_number(j, "fp8_gemm_efficiency", p);
  g.gemm_half_dim = get_number(j, "gemm_half_dim", p);
  g.attention_efficiency = get_number(j, "attention_efficiency", p);
  g.hbm_efficiency = get_number(j, "hbm_efficiency", p);
  g.nvlink_efficiency = get_number(j, "nvlink_efficiency", p);
  g.network_efficiency = get_number(j, "network_efficiency", p);
  g.usable_memory_gib = get_number(j, "usable_memory_gib", p);
  g.validate();
  return g;
}

std::string catalog_keys() {
  std::string list;
  for (const auto& g : gpu_catalog()) list += (list.empty() ? "" : ", ") + g.key;
  return list;
}

}  // namespace

const std::vector<GpuSpec>& gpu_catalog() {
  static const std::vector<GpuSpec> catalog = [] {
    const auto* file = find_builtin_file("gpus.json");
    if (file == nullptr) throw Error("gpus.json", "missing from the build", "data/gpus.json");
    const auto j = parse(std::string(file->text), "gpus.json");
    std::vector<GpuSpec> out;
    for (const auto& g : j.at("gpus")) out.push_back(gpu_from_json(g, "gpus"));
    return out;
  }();
  return catalog;
}

const GpuSpec& find_gpu(const std::string& key) {
  for (const auto& g : gpu_catalog())
    if (g.key == key) return g;
  throw Error("gpu", "unknown GPU '" + key + "'", catalog_keys());
}

nlohmann::json gpu_to_json(const GpuSpec& g) {
  return {{"key", g.key},
          {"name", g.name},
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
          {"hbm_efficiency", g.hbm_efficiency},
          {"nvlink_efficiency", g.nvlink_efficiency},
          {"network_efficiency", g.network_efficiency},
          {"usable_memory_gib", g.usable_memory_gib}};
}

Cluster cluster_from_json(const nlohmann::json& j) {
  const std::string path = "cluster";
  require_object(j, path);
  reject_unknown_keys(j, path, {"name", "gpu", "gpus", "nodes", "gpus_per_node",
                                "network_gbps_per_gpu", "nvlink_gbps", "notes"});
  GpuSpec gpu = find_gpu(get_string(j, "gpu", path));
  if (has(j, "nvlink_gbps")) gpu.nvlink_gbps = get_number(j, "nvlink_gbps", path);
  const std::int64_t per_node = get_int_or(j, "gpus_per_node", path, gpu.gpus_per_node);
  require_positive("cluster.gpus_per_node", per_node, kMaxGpusPerNode);
  if (has(j, "gpus") == has(j, "nodes"))
    throw Error("cluster.gpus", "give exactly one of gpus and nodes", "gpus: N or nodes: N");
  std::int64_t count = 0;
  if (has(j, "gpus")) {
    count = get_int(j, "gpus", path);
  } else {
    const std::int64_t nodes = get_int(j, "nodes", path);
    require_positive("cluster.nodes", nodes, kMaxGpus / per_node);
    count = nodes * per_node;
  }
  const double network = get_number_or(j, "network_gbps_per_gpu", path, 0.0);
  if (has(j, "network_gbps_per_gpu") && network <= 0)
    throw Error("cluster.network_gbps_per_gpu", "must be positive", "a number > 0 (Gbit/s)");
  return make_cluster(gpu, count, per_node, network);
}

Cluster load_cluster(const std::string& text) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(text, ec)) {
    const auto j = parse_file(text, "cluster");
    if (j.is_object() && j.contains("pools"))
      throw Error("cluster.pools", "a cluster of several GPU pools is planned by `tessera plan`",
                  "a single-pool cluster (GPU:COUNT or {\"gpu\", \"gpus\"}) for this command");
    return cluster_from_json(j);
  }
  if (text.find('+') != std::string::npos)
    throw Error("cluster", "'" + text + "' has several pools; `tessera plan` plans those", "GPU:COUNT");
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw Error("cluster", "'" + text + "' is neither GPU:COUNT nor a file",
                "GPU:COUNT with GPU one of " + catalog_keys() + ", or a cluster JSON path");
  const GpuSpec& gpu = find_gpu(text.substr(0, colon));
  return make_cluster(gpu, parse_integer(text.substr(colon + 1), "cluster.gpus"));
}

MixedCluster load_mixed_cluster(const std::string& text) {
  MixedCluster mixed;
  std::error_code ec;
  double inter_pool_gbps = 0;
  if (std::filesystem::is_regular_file(text, ec)) {
    const auto j = parse_file(text, "cluster");
    if (!(j.is_object() && j.contains("pools"))) {
      mixed.pools.push_back(cluster_from_json(j));
    } else {
      reject_unknown_keys(j, "cluster", {"name", "notes", "pools", "inter_pool_gbps"});
      const auto& pools = j.at("pools");
      if (!pools.is_array() || pools.empty())
        throw Error("cluster.pools", "expected a non-empty array", "[{\"gpu\": ..., \"gpus\": ...}, ...]");
      for (const auto& pool : pools) mixed.pools.push_back(cluster_from_json(pool));
      inter_pool_gbps = get_number_or(j, "inter_pool_gbps", "cluster", 0.0);
      if (mixed.pools.size() > 1 && !(inter_pool_gbps > 0))
        throw Error("cluster.inter_pool_gbps", "missing or not positive", "aggregate Gbit/s between two pools, > 0");
    }
  } else {
    std::size_t start = 0;
    while (start <= text.size()) {
      const std::size_t plus = text.find('+', start);
      mixed.pools.push_back(load_cluster(text.substr(start, plus == std::string::npos ? std::string::npos : plus - start)));
      if (plus == std::string::npos) break;
      start = plus + 1;
    }
  }
  if (mixed.pools.size() > 1) {
    if (inter_pool_gbps > 0) {
      mixed.inter_pool.bandwidth_bytes_per_s = units::gbps_to_bytes_per_s(inter_pool_gbps);
    } else {
      // The pools share one fabric: the smaller pool's NICs together bound the exchange.
      double smallest = -1;
      for (const auto& pool : mixed.pools) {
        const double nic = static_cast<double>(pool.gpus()) * pool.inter_node.bandwidth_bytes_per_s;
        if (smallest < 0 || nic < smallest) smallest = nic;
      }
      mixed.inter_pool.bandwidth_bytes_per_s = smallest;
    }
    mixed.inter_pool.latency_s = kNetworkLatencyS;
  }
  mixed.validate();
  return mixed;
}

}  // namespace tessera
