// The GPU catalog (data/gpus.json, embedded), the user's GPUs (--gpu-file, registered for one
// command), and cluster descriptions: the --cluster shorthand "gpu-key:count" or a cluster JSON.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "formats/calibration_profile_json.h"
#include "formats/gpu_json.h"
#include "hardware/cluster.h"
#include "hardware/gpu_spec.h"
#include "hardware/mixed_cluster.h"

namespace tessera {

const std::vector<GpuSpec>& gpu_catalog();

// The GPU a name means, built-in or registered: its key or an alias, ignoring case and the
// separators '-', '_', ' ' ("H100-SXM-80GB", "h100"). Throws Error("gpu", "unknown GPU 'x'; did
// you mean y?", <keys>). References stay valid for the process.
const GpuSpec& find_gpu(const std::string& name);

// --gpu-file: registers every GPU of the file (README "GPU file"), which `find_gpu` and the
// cluster shorthand then resolve; returns their keys. A GPU whose key or alias names a catalog or
// already-registered GPU is an Error unless its figures are identical (then nothing changes), so
// a catalog GPU's validated figures never change silently and `tessera gpus --json` reads back.
// Registrations are per thread and last until the ScopedUserGpus open when they were made closes:
// one command, or one Python call (a later call does not see an earlier call's --gpu-file).
std::vector<std::string> add_user_gpus_from_file(const std::string& path);
void add_user_gpu(const GpuSpec& gpu);
std::vector<GpuSpec> user_gpus();  // in registration order
void clear_user_gpus();            // for tests: forget every registered GPU

// Forgets, when it closes, every GPU registered on this thread while it was open.
class ScopedUserGpus {
 public:
  ScopedUserGpus();
  ~ScopedUserGpus();
  ScopedUserGpus(const ScopedUserGpus&) = delete;
  ScopedUserGpus& operator=(const ScopedUserGpus&) = delete;

 private:
  std::size_t registered_before_;
};

// --profile: while a ScopedProfile lives on a thread, find_gpu (and so every cluster that thread
// builds) returns each GPU the profile calibrated with the profile's values applied
// (calibration_profile_json.h). Thread-local, so concurrent Python calls with different profiles
// do not see each other's; the planner's worker threads get clusters by value. Throws Error
// ("profile.gpus[i].key") when a profile names an unknown GPU or gives a value its range refuses.
// A profile's measured links replace the link tiers of every cluster loaded in the scope
// (load_cluster, cluster_from_json, load_mixed_cluster). A scope opened inside another replaces
// it (the catalog with the inner profile, not both) until it closes, then the outer one is in force
// again: plan --compare-profile plans under the old profile inside the --profile scope.
class ScopedProfile {
 public:
  explicit ScopedProfile(LoadedProfile profile);
  ~ScopedProfile();
  ScopedProfile(const ScopedProfile&) = delete;
  ScopedProfile& operator=(const ScopedProfile&) = delete;

 private:
  // The scope this one replaced, restored when it closes.
  std::optional<LoadedProfile> outer_profile_;
  std::deque<GpuSpec> outer_calibrated_;
};
// The profile in force on this thread, or nullptr.
const LoadedProfile* active_profile();

// "a100-sxm-80gb:1024", "H100:64", or a path to a cluster JSON:
// {"gpu": "h100-sxm-80gb" | {<GPU object, as in a GPU file>}, "gpus": 64 | "nodes": 8,
//  "gpus_per_node": 8, "network_gbps_per_gpu": 400, "nvlink_gbps": 900}
// An inline GPU object is used as given (not registered); its key must not name another GPU.
Cluster load_cluster(const std::string& shorthand_or_path);
// The GPU of a bare GPU key, GPU:COUNT or a cluster JSON (commands where only the GPU type matters:
// the balancer's and the data service's sample costs).
GpuSpec gpu_of_cluster(const std::string& key_shorthand_or_path);
// `origin` says where an inline GPU comes from ("file cluster.json") in its default source.
Cluster cluster_from_json(const nlohmann::json& j, const std::string& origin = "a cluster JSON");

// Pools of different GPUs: "h100-sxm-80gb:64+a100-sxm-80gb:128" (pools joined at the smaller
// pool's total NIC bandwidth) or a JSON file {"pools": [<cluster objects>], "inter_pool_gbps": N}
// with N the aggregate Gbit/s between two pools. A plain cluster is one pool. Measured links
// replace the tiers in this order, last wins: the active profile's, then `links` (plan's link
// flags: node tiers of every pool, the inter-pool link). The inter-pool link a file does not give
// is derived from the pools' tiers after their overrides.
MixedCluster load_mixed_cluster(const std::string& shorthand_or_path, const LinkOverrides& links = {});

}  // namespace tessera
