#include "hardware/cluster.h"

#include "core/checks.h"
#include "core/units.h"

namespace tessera {

namespace {
// The catalog lists NVLink as both directions summed; collectives use one direction.
constexpr double kDirectionsPerLink = 2.0;
}  // namespace

void Cluster::validate() const {
  gpu.validate();
  require_positive("cluster.nodes", nodes, kMaxClusterGpus);
  require_positive("cluster.gpus_per_node", gpus_per_node, 1024);
  require_positive("cluster.gpus", gpus(), kMaxClusterGpus);
  require_positive_real("cluster.intra_node.bandwidth", intra_node.bandwidth_bytes_per_s, 1e15);
  require_positive_real("cluster.inter_node.bandwidth", inter_node.bandwidth_bytes_per_s, 1e15);
}

Cluster make_cluster(const GpuSpec& gpu, std::int64_t gpu_count, std::int64_t gpus_per_node,
                     double network_gbps_per_gpu) {
  require_positive("cluster.gpus", gpu_count, kMaxClusterGpus);
  require_non_negative("cluster.gpus_per_node", gpus_per_node, 1024);
  Cluster c;
  c.gpu = gpu;
  const std::int64_t node_size = gpus_per_node > 0 ? gpus_per_node : gpu.gpus_per_node;
  if (gpu_count < node_size) {
    c.nodes = 1;
    c.gpus_per_node = gpu_count;
  } else {
    if (gpu_count % node_size != 0)
      throw Error("cluster.gpus", std::to_string(gpu_count) + " is not a whole number of " +
                                      std::to_string(node_size) + "-GPU nodes",
                  "a multiple of " + std::to_string(node_size) + ", or fewer than one node");
    c.nodes = gpu_count / node_size;
    c.gpus_per_node = node_size;
  }
  const double nic_gbps = network_gbps_per_gpu > 0 ? network_gbps_per_gpu : gpu.network_gbps_per_gpu;
  c.intra_node.bandwidth_bytes_per_s =
      units::gb_per_s_to_bytes_per_s(gpu.nvlink_gbps / kDirectionsPerLink) * gpu.nvlink_efficiency;
  c.intra_node.latency_s = gpu.nvlink_latency_s;
  c.inter_node.bandwidth_bytes_per_s = units::gbps_to_bytes_per_s(nic_gbps) * gpu.network_efficiency;
  c.inter_node.latency_s = gpu.network_latency_s;
  c.validate();
  return c;
}

}  // namespace tessera
