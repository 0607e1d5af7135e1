// Time of NCCL-style collectives under the alpha-beta model (Hockney; Thakur, Rabenseifner and
// Gropp 2005, "Optimization of collective communication operations in MPICH", ring algorithms):
//   all-reduce      2 (n-1)/n * bytes / bw + 2 (n-1) alpha
//   all-gather,
//   reduce-scatter    (n-1)/n * bytes / bw +   (n-1) alpha     (bytes = the full, gathered size)
//   all-to-all        (n-1)/n * bytes / (e bw) + (n-1) alpha   (bytes = what one rank holds)
// `bw` is the group's per-GPU bus bandwidth on the slowest tier it spans (GroupLink); `e` the
// GPU's all_to_all_efficiency, the all-to-all's bus bandwidth over the ring's (NCCL's alltoall is
// point-to-point sends, not a ring, and over NVSwitch may beat it). Ring collectives ignore `e`.
#pragma once

#include <cstdint>

#include "hardware/cluster.h"

namespace tessera {

// The link a communication group runs on. A group whose members are `stride` ranks apart
// (tp = 1, cp = tp, dp = tp*cp, pp = tp*cp*dp) stays inside a node when stride * size <= node
// size. Otherwise its ring crosses nodes: each node holds k members, and NCCL runs k rings, one
// through each member's NIC, so the bus bandwidth is min(NVLink, k * NIC) per GPU.
struct GroupLink {
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
  double all_to_all_efficiency = kDefaultAllToAllEfficiency;  // from the cluster's GpuSpec
};
GroupLink group_link(const Cluster& cluster, std::int64_t stride, std::int64_t size);

double all_reduce_time_s(double bytes, std::int64_t ranks, const GroupLink& link);
double all_gather_time_s(double bytes, std::int64_t ranks, const GroupLink& link);
double reduce_scatter_time_s(double bytes, std::int64_t ranks, const GroupLink& link);
double all_to_all_time_s(double bytes, std::int64_t ranks, const GroupLink& link);
double p2p_time_s(double bytes, const GroupLink& link);

// All-to-all over a group of `ranks` members `stride` ranks apart, each rank holding `bytes` to
// spread evenly over the members. Unlike a ring, an all-to-all cannot borrow other GPUs' NICs:
// the share bound for other nodes leaves through this GPU's own NIC while the share for members
// in the same node crosses NVLink, both at once (NCCL's alltoall is a set of point-to-point
// sends). Both run at the tiers' NCCL bus bandwidth (the cluster's link efficiencies) times the
// GPU's all_to_all_efficiency.
double expert_all_to_all_time_s(double bytes, std::int64_t ranks, std::int64_t stride, const Cluster& cluster);
// DeepEP-style dispatch (Megatron's "flex" dispatcher, DeepEP / HybridEP kernels; DeepSeek-V3
// §3.2.2): each token crosses the network once per destination node and is forwarded to its
// experts over NVLink there. `token_bytes` is one token's payload, `tokens` the tokens this rank
// sends, `top_k` experts per token; the group spans `ranks` members `stride` apart. Both tiers'
// bandwidth is scaled by the GPU's all_to_all_efficiency, as the all-to-all's.
// `routing` limits the nodes a token reaches where the router picks experts only in its top
// groups (DeepSeek-V3's node-limited routing, §2.1.2 / §3.2.2: 8 groups, top 4).
struct GroupLimitedRouting {
  std::int64_t groups = 0;       // expert groups (0: unlimited routing)
  std::int64_t topk_groups = 0;  // groups each token may use
};
double deduplicated_dispatch_time_s(double token_bytes, double tokens, std::int64_t top_k,
                                    std::int64_t ranks, std::int64_t stride, const Cluster& cluster,
                                    GroupLimitedRouting routing = {});
// Expected nodes other than its own that a token's top_k experts fall on, experts spread evenly
// over `nodes`; with group-limited routing the experts lie in topk_groups of the groups, each a
// contiguous block of experts (so of ranks, so of nodes: Megatron-Core places experts on EP ranks
// in order).
double expected_remote_nodes(double nodes, std::int64_t top_k, GroupLimitedRouting routing);

}  // namespace tessera
