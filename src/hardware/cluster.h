// Cluster: nodes of identical GPUs joined by two link tiers. Rank order is tp innermost, then
// cp, dp (ep carved from dp x cp x tp), pp outermost, as Megatron-Core lays out ranks.
#pragma once

#include <cstdint>
#include <string>

#include "hardware/gpu_spec.h"

namespace tessera {

// GPUs in one cluster: 10^7, above any job run or planned (the largest publicised clusters hold
// ~10^5-10^6 GPUs), small enough that products with a few other counts stay exact in int64.
inline constexpr std::int64_t kMaxClusterGpus = 10'000'000;

// One tier of the interconnect, per GPU, one direction, after NCCL efficiency.
struct LinkTier {
  double bandwidth_bytes_per_s = 0;  // achievable bus bandwidth per GPU
  double latency_s = 0;              // per-message (per ring step) latency
};

struct Cluster {
  GpuSpec gpu;
  std::int64_t nodes = 0;
  std::int64_t gpus_per_node = 0;
  LinkTier intra_node;
  LinkTier inter_node;

  std::int64_t gpus() const { return nodes * gpus_per_node; }
  void validate() const;  // throws tessera::Error("cluster.<field>", ...)
};

// A cluster of `gpu_count` GPUs in nodes of the GPU's default size (or `gpus_per_node` if > 0),
// links from the GPU's catalog figures and latencies (GpuSpec::nvlink_latency_s,
// network_latency_s). A partial last node is allowed only below one node.
Cluster make_cluster(const GpuSpec& gpu, std::int64_t gpu_count, std::int64_t gpus_per_node = 0,
                     double network_gbps_per_gpu = 0);

}  // namespace tessera
