#include "catalog/gpu_catalog.h"

#include <algorithm>
#include <deque>
#include <filesystem>
#include <optional>

#include "calibrate/calibration_profile.h"
#include "catalog/builtin_data.h"
#include "catalog/name_match.h"
#include "core/checks.h"
#include "core/error.h"
#include "core/units.h"
#include "formats/gpu_json.h"
#include "formats/integer_text.h"
#include "formats/json_fields.h"
#include "hardware/physical_ranges.h"

namespace tessera {

using namespace json_fields;

namespace {


// The GPUs --gpu-file registered on this thread. Thread-local, like the profile overlay: one
// command (one Python call) registers them and its ScopedUserGpus forgets them, so concurrent or
// later calls never see another call's GPUs. The planner's worker threads get clusters by value.
struct UserGpuRegistry {
  std::deque<GpuSpec> gpus;  // a deque: find_gpu's references survive later registrations
};

UserGpuRegistry& user_registry() {
  thread_local UserGpuRegistry registry;
  return registry;
}

// A name that finds a GPU: its key or one of its aliases.
struct GpuName {
  std::string name;
  const GpuSpec* gpu;
};

std::vector<GpuName> gpu_names(const std::deque<GpuSpec>& users) {
  std::vector<GpuName> out;
  const auto add = [&out](const GpuSpec& g) {
    out.push_back({g.key, &g});
    for (const auto& alias : g.aliases) out.push_back({alias, &g});
  };
  for (const auto& g : gpu_catalog()) add(g);
  for (const auto& g : users) add(g);
  return out;
}

std::string gpu_keys(const std::deque<GpuSpec>& users) {
  std::vector<std::string> keys;
  for (const auto& g : gpu_catalog()) keys.push_back(g.key);
  for (const auto& g : users) keys.push_back(g.key);
  return joined_names(keys);
}

std::string all_gpu_keys() {
  auto& registry = user_registry();
  return gpu_keys(registry.gpus);
}

const GpuSpec& find_gpu_in(const std::string& name, const std::deque<GpuSpec>& users) {
  const auto named = gpu_names(users);
  std::vector<std::string> names;
  for (const auto& n : named) names.push_back(n.name);
  if (const auto index = match_name(name, names, "gpu")) return *named[*index].gpu;
  // An alias suggests its GPU's key ("h100x" -> h100-sxm-80gb), the name the list shows.
  std::vector<std::string> keys;
  for (const auto& near : nearest_names(name, names))
    for (const auto& n : named)
      if (n.name == near && std::find(keys.begin(), keys.end(), n.gpu->key) == keys.end()) keys.push_back(n.gpu->key);
  throw unknown_name_error("gpu", "GPU", name, either_of(keys), gpu_keys(users));
}

bool in_catalog(const GpuSpec* gpu) {
  const auto& catalog = gpu_catalog();
  return std::any_of(catalog.begin(), catalog.end(), [gpu](const GpuSpec& g) { return &g == gpu; });
}

void require_distinct_own_names(const GpuSpec& gpu) {
  std::vector<std::string> seen = {normalized_name(gpu.key)};
  for (const auto& alias : gpu.aliases) {
    if (std::find(seen.begin(), seen.end(), normalized_name(alias)) != seen.end())
      throw Error("gpu." + gpu.key + ".aliases", "'" + alias + "' repeats the key or another alias",
                  "names that differ beyond case and '-', '_', ' '");
    seen.push_back(normalized_name(alias));
  }
}

// True if a GPU identical to `gpu` is known (nothing to add); throws if one of its names (key or
// alias, compared as find_gpu compares) already finds a different GPU.
bool already_known(const GpuSpec& gpu, const std::deque<GpuSpec>& users) {
  require_distinct_own_names(gpu);
  std::vector<std::string> own = {gpu.key};
  own.insert(own.end(), gpu.aliases.begin(), gpu.aliases.end());
  bool identical = false;
  for (const auto& known : gpu_names(users)) {
    for (const auto& name : own) {
      if (normalized_name(name) != normalized_name(known.name)) continue;
      if (*known.gpu == gpu) {
        identical = true;
        continue;
      }
      throw Error("gpu." + gpu.key + (name == gpu.key ? ".key" : ".aliases"),
                  "'" + name + "' already names the " + (in_catalog(known.gpu) ? "catalog" : "registered") +
                      " GPU " + known.gpu->key + " with other values",
                  "a key and aliases no other GPU uses (a catalog GPU's figures are not replaced: "
                  "copy its entry from `tessera gpus --json` under a new key)");
    }
  }
  return identical;
}

}  // namespace

const std::vector<GpuSpec>& gpu_catalog() {
  static const std::vector<GpuSpec> catalog = [] {
    const auto* file = find_builtin_file("gpus.json");
    if (file == nullptr) throw Error("gpus.json", "missing from the build", "data/gpus.json");
    return gpus_from_json(parse(std::string(file->text), "gpus.json"), "the built-in catalog");
  }();
  return catalog;
}

namespace {
// The profile of this thread's ScopedProfile and the calibrated GPUs made from it (a deque, so
// references find_gpu returned stay valid while the scope lives).
struct ProfileOverlay {
  std::optional<LoadedProfile> profile;
  std::deque<GpuSpec> calibrated;
};
ProfileOverlay& profile_overlay() {
  thread_local ProfileOverlay overlay;
  return overlay;
}

const GpuSpec& calibrated_or_catalog(const GpuSpec& gpu) {
  ProfileOverlay& overlay = profile_overlay();
  if (!overlay.profile) return gpu;
  for (const GpuSpec& g : overlay.calibrated)
    if (g.key == gpu.key) return g;
  for (const auto& entry : overlay.profile->gpus)
    if (entry.key == gpu.key) return overlay.calibrated.emplace_back(apply_profile(gpu, *overlay.profile));
  return gpu;
}
}  // namespace

ScopedProfile::ScopedProfile(LoadedProfile profile) {
  for (std::size_t i = 0; i < profile.gpus.size(); ++i) {
    const std::string field = "profile.gpus[" + std::to_string(i) + "].key";
    try {
      const GpuSpec& gpu = find_gpu(profile.gpus[i].key);
      if (gpu.key != profile.gpus[i].key)
        throw Error(field, "'" + profile.gpus[i].key + "' is not a GPU key", "the key " + gpu.key);
      (void)apply_profile(gpu, profile);  // its values within their ranges, before anything runs
    } catch (const Error& e) {
      // A refitted value or a measured GEMM out of its range is named where the profile holds it
      // (gpu.<key>.gemm_efficiency -> parameters.gemm_efficiency, gpu.<key>.measured_gemms[3].tflops
      // -> measured_gemms[3].tflops); anything else (an unknown GPU) is the entry's key.
      const std::string& inner = e.field();
      const std::string spec_prefix = "gpu." + profile.gpus[i].key + ".";
      const std::string entry = "profile.gpus[" + std::to_string(i) + "].";
      std::string where = field;
      if (inner.rfind(spec_prefix, 0) == 0) {
        const std::string rest = inner.substr(spec_prefix.size());
        where = entry + (rest.rfind("measured_gemms[", 0) == 0 ? rest : "parameters." + rest.substr(rest.rfind('.') + 1));
      }
      throw Error(where + " (" + profile.file + ")", e.problem(), e.allowed());
    }
  }
  ProfileOverlay& overlay = profile_overlay();
  outer_profile_ = std::move(overlay.profile);
  outer_calibrated_ = std::move(overlay.calibrated);  // a deque's move keeps its elements in place
  overlay.profile = std::move(profile);
  overlay.calibrated.clear();
}

ScopedProfile::~ScopedProfile() {
  ProfileOverlay& overlay = profile_overlay();
  overlay.profile = std::move(outer_profile_);
  overlay.calibrated = std::move(outer_calibrated_);
}

const LoadedProfile* active_profile() {
  const auto& p = profile_overlay().profile;
  return p ? &*p : nullptr;
}

const GpuSpec& find_gpu(const std::string& name) {
  auto& registry = user_registry();
  return calibrated_or_catalog(find_gpu_in(name, registry.gpus));
}

void add_user_gpu(const GpuSpec& gpu) {
  gpu.validate();
  auto& registry = user_registry();
  if (!already_known(gpu, registry.gpus)) registry.gpus.push_back(gpu);
}

std::vector<std::string> add_user_gpus_from_file(const std::string& path) {
  const std::vector<GpuSpec> gpus = gpus_from_json(parse_file(path, "gpu_file"), "file " + path);
  auto& registry = user_registry();
  const std::size_t before = registry.gpus.size();
  std::vector<std::string> keys;
  try {
    for (const auto& g : gpus) {
      if (!already_known(g, registry.gpus)) registry.gpus.push_back(g);
      keys.push_back(g.key);
    }
  } catch (const Error&) {
    registry.gpus.resize(before);  // all of the file or none of it
    throw;
  }
  return keys;
}

std::vector<GpuSpec> user_gpus() {
  auto& registry = user_registry();
  return {registry.gpus.begin(), registry.gpus.end()};
}

ScopedUserGpus::ScopedUserGpus() : registered_before_(user_registry().gpus.size()) {}

ScopedUserGpus::~ScopedUserGpus() {
  auto& gpus = user_registry().gpus;
  if (gpus.size() > registered_before_) gpus.resize(registered_before_);  // from the back: earlier references stay valid
}

void clear_user_gpus() {
  auto& registry = user_registry();
  registry.gpus.clear();
}

namespace {

// The cluster's "gpu": a name (catalog or registered) or an inline GPU object.
GpuSpec cluster_gpu(const nlohmann::json& j, const std::string& origin) {
  if (!has(j, "gpu")) throw Error("cluster.gpu", "missing", "a GPU name or a GPU object");
  const auto& gpu = j.at("gpu");
  if (gpu.is_string()) return find_gpu(gpu.get<std::string>());
  if (!gpu.is_object())
    throw Error("cluster.gpu", "expected a GPU name or object, got " + excerpt(gpu),
                "a GPU name (tessera gpus) or a GPU object as in a GPU file");
  GpuSpec inline_gpu = gpu_from_json(gpu, "cluster.gpu", origin);
  auto& registry = user_registry();
  already_known(inline_gpu, registry.gpus);  // throws if its key names another GPU
  return inline_gpu;
}

// The cluster with the active profile's measured links for its GPU (unchanged without a profile).
Cluster with_profile_links(Cluster cluster) {
  const LoadedProfile* profile = active_profile();
  if (profile == nullptr) return cluster;
  // Read the key before the move (argument evaluation order is unspecified: Clang moves first).
  const NodeLinkOverrides links = profile_node_links(*profile, cluster.gpu.key);
  return with_node_links(std::move(cluster), links);
}

// A bandwidth written in the cluster file, checked where it is read so the error names the
// field the user wrote (not the GPU field it overrides).
double cluster_bandwidth(const nlohmann::json& j, const char* key, const std::string& unit) {
  const double value = get_number(j, key, "cluster");
  require_in_range(std::string("cluster.") + key, value, physical::kMinBandwidthGbps, physical::kMaxBandwidthGbps, unit);
  return value;
}

}  // namespace

Cluster cluster_from_json(const nlohmann::json& j, const std::string& origin) {
  const std::string path = "cluster";
  require_object(j, path);
  reject_unknown_keys(j, path, {"name", "gpu", "gpus", "nodes", "gpus_per_node",
                                "network_gbps_per_gpu", "nvlink_gbps", "host", "notes"});
  GpuSpec gpu = cluster_gpu(j, origin);
  if (has(j, "nvlink_gbps")) gpu.nvlink_gbps = cluster_bandwidth(j, "nvlink_gbps", "GB/s");
  // The node's host memory, host link, NVMe and CPU (offload tiers): what the file names replaces
  // the catalog's node defaults.
  if (has(j, "host")) gpu.host = host_from_json(j.at("host"), "cluster.host", gpu.host);
  const std::int64_t per_node = get_int_or(j, "gpus_per_node", path, gpu.gpus_per_node);
  require_positive("cluster.gpus_per_node", per_node, physical::kMaxGpusPerNode);
  if (has(j, "gpus") == has(j, "nodes"))
    throw Error("cluster.gpus", "give exactly one of gpus and nodes", "gpus: N or nodes: N");
  std::int64_t count = 0;
  if (has(j, "gpus")) {
    count = get_int(j, "gpus", path);
  } else {
    const std::int64_t nodes = get_int(j, "nodes", path);
    require_positive("cluster.nodes", nodes, kMaxClusterGpus / per_node);
    count = nodes * per_node;
  }
  const double network = has(j, "network_gbps_per_gpu") ? cluster_bandwidth(j, "network_gbps_per_gpu", "Gbit/s") : 0.0;
  return with_profile_links(make_cluster(gpu, count, per_node, network));
}

Cluster load_cluster(const std::string& text) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(text, ec)) {
    const auto j = parse_file(text, "cluster");
    if (j.is_object() && j.contains("pools"))
      throw Error("cluster.pools", "a cluster of several GPU pools is planned by `tessera plan`",
                  "a single-pool cluster (GPU:COUNT or {\"gpu\", \"gpus\"}) for this command");
    return cluster_from_json(j, "cluster file " + text);
  }
  if (text.find('+') != std::string::npos)
    throw Error("cluster", "'" + text + "' has several pools; `tessera plan` plans those", "GPU:COUNT");
  const auto colon = text.find(':');
  if (colon == std::string::npos)
    throw Error("cluster", "'" + text + "' is neither GPU:COUNT nor a file",
                "GPU:COUNT with GPU one of " + all_gpu_keys() + ", or a cluster JSON path");
  const GpuSpec& gpu = find_gpu(text.substr(0, colon));
  return with_profile_links(make_cluster(gpu, parse_integer(text.substr(colon + 1), "cluster.gpus")));
}

MixedCluster load_mixed_cluster(const std::string& text, const LinkOverrides& links) {
  MixedCluster mixed;
  std::error_code ec;
  double inter_pool_gbps = 0;
  if (std::filesystem::is_regular_file(text, ec)) {
    const auto j = parse_file(text, "cluster");
    if (!(j.is_object() && j.contains("pools"))) {
      mixed.pools.push_back(cluster_from_json(j, "cluster file " + text));
    } else {
      reject_unknown_keys(j, "cluster", {"name", "notes", "pools", "inter_pool_gbps"});
      const auto& pools = j.at("pools");
      if (!pools.is_array() || pools.empty())
        throw Error("cluster.pools", "expected a non-empty array", "[{\"gpu\": ..., \"gpus\": ...}, ...]");
      for (const auto& pool : pools) mixed.pools.push_back(cluster_from_json(pool, "cluster file " + text));
      if (has(j, "inter_pool_gbps")) inter_pool_gbps = cluster_bandwidth(j, "inter_pool_gbps", "Gbit/s between two pools");
      if (mixed.pools.size() > 1 && !(inter_pool_gbps > 0))
        throw Error("cluster.inter_pool_gbps", "missing", "aggregate Gbit/s between two pools, > 0");
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
  for (auto& pool : mixed.pools) pool = with_node_links(std::move(pool), links.every_pool);
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
    // A message between pools crosses both pools' networks: the slower one's latency bounds it.
    mixed.inter_pool.latency_s = 0;
    for (const auto& pool : mixed.pools)
      mixed.inter_pool.latency_s = std::max(mixed.inter_pool.latency_s, pool.inter_node.latency_s);
    if (const LoadedProfile* profile = active_profile()) set_inter_pool_links(mixed, profile->links);
    set_inter_pool_links(mixed, links);
  }
  mixed.validate();
  return mixed;
}

GpuSpec gpu_of_cluster(const std::string& text) {
  if (text.find(':') == std::string::npos && text.find('/') == std::string::npos && text.find(".json") == std::string::npos)
    return find_gpu(text);
  return load_cluster(text).gpu;
}

}  // namespace tessera
