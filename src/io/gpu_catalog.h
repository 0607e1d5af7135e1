// The GPU catalog (data/gpus.json, embedded) and cluster descriptions: the --cluster shorthand
// "gpu-key:count" or a cluster JSON file.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/cluster.h"
#include "hardware/gpu_spec.h"
#include "hardware/mixed_cluster.h"

namespace tessera {

const std::vector<GpuSpec>& gpu_catalog();
const GpuSpec& find_gpu(const std::string& key);  // throws Error("gpu", ...) listing the keys
nlohmann::json gpu_to_json(const GpuSpec& gpu);

// "a100-sxm-80gb:1024", "h100-sxm-80gb:16384", or a path to a cluster JSON:
// {"gpu": "h100-sxm-80gb", "gpus": 64 | "nodes": 8, "gpus_per_node": 8,
//  "network_gbps_per_gpu": 400, "nvlink_gbps": 900}
Cluster load_cluster(const std::string& shorthand_or_path);
Cluster cluster_from_json(const nlohmann::json& j);

// Pools of different GPUs: "h100-sxm-80gb:64+a100-sxm-80gb:128" (pools joined at the smaller
// pool's total NIC bandwidth) or a JSON file {"pools": [<cluster objects>], "inter_pool_gbps": N}
// with N the aggregate Gbit/s between two pools. A plain cluster is one pool.
MixedCluster load_mixed_cluster(const std::string& shorthand_or_path);

}  // namespace tessera
