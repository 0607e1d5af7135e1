#include "cost/collective_cost.h"

#include <algorithm>
#include <cmath>

namespace tessera {

GroupLink group_link(const Cluster& c, std::int64_t stride, std::int64_t size) {
  const double a2a = c.gpu.all_to_all_efficiency;
  if (size <= 1) return {c.intra_node.bandwidth_bytes_per_s, 0.0, a2a};
  if (stride * size <= c.gpus_per_node) return {c.intra_node.bandwidth_bytes_per_s, c.intra_node.latency_s, a2a};
  const std::int64_t members_per_node = std::max<std::int64_t>(1, c.gpus_per_node / stride);
  const double bw = std::min(c.intra_node.bandwidth_bytes_per_s,
                             static_cast<double>(members_per_node) * c.inter_node.bandwidth_bytes_per_s);
  return {bw, c.inter_node.latency_s, a2a};
}

double all_reduce_time_s(double bytes, std::int64_t n, const GroupLink& link) {
  if (n <= 1 || bytes <= 0) return 0.0;
  const double steps = static_cast<double>(n - 1);
  return 2.0 * steps / n * bytes / link.bandwidth_bytes_per_s + 2.0 * steps * link.latency_s;
}

double all_gather_time_s(double bytes, std::int64_t n, const GroupLink& link) {
  if (n <= 1 || bytes <= 0) return 0.0;
  const double steps = static_cast<double>(n - 1);
  return steps / n * bytes / link.bandwidth_bytes_per_s + steps * link.latency_s;
}

double reduce_scatter_time_s(double bytes, std::int64_t n, const GroupLink& link) {
  return all_gather_time_s(bytes, n, link);
}

double all_to_all_time_s(double bytes, std::int64_t n, const GroupLink& link) {
  GroupLink a2a = link;
  a2a.bandwidth_bytes_per_s *= link.all_to_all_efficiency;
  return all_gather_time_s(bytes, n, a2a);
}

double p2p_time_s(double bytes, const GroupLink& link) {
  if (bytes <= 0) return 0.0;
  return bytes / link.bandwidth_bytes_per_s + link.latency_s;
}

namespace {
// Members of a group of `ranks`, `stride` apart, that share a node with a given member.
double members_per_node(std::int64_t ranks, std::int64_t stride, const Cluster& c) {
  const std::int64_t span = std::max<std::int64_t>(1, c.gpus_per_node / std::max<std::int64_t>(1, stride));
  return static_cast<double>(std::min(ranks, span));
}

// Seconds to send `intra_bytes` over NVLink and `inter_bytes` through the NIC at once, both at the
// all-to-all's bus bandwidth (the tier's ring bus bandwidth x all_to_all_efficiency).
double concurrent_send_s(double intra_bytes, double inter_bytes, const Cluster& c) {
  const double e = c.gpu.all_to_all_efficiency;
  const double intra_s = intra_bytes / (c.intra_node.bandwidth_bytes_per_s * e);
  const double inter_s = inter_bytes / (c.inter_node.bandwidth_bytes_per_s * e);
  return std::max(intra_s, inter_s);
}
}  // namespace

double expert_all_to_all_time_s(double bytes, std::int64_t n, std::int64_t stride, const Cluster& c) {
  if (n <= 1 || bytes <= 0) return 0.0;
  const double ranks = static_cast<double>(n);
  const double local = members_per_node(n, stride, c);
  const double intra_bytes = bytes * (local - 1.0) / ranks;
  const double inter_bytes = bytes * (ranks - local) / ranks;
  // NCCL issues the sends to every peer at once (grouped point-to-point), so the latency is paid
  // about once, not once per peer as in a ring.
  const double latency_s = inter_bytes > 0 ? c.inter_node.latency_s : c.intra_node.latency_s;
  return concurrent_send_s(intra_bytes, inter_bytes, c) + latency_s;
}

double expected_remote_nodes(double nodes, std::int64_t top_k, GroupLimitedRouting routing) {
  const double k = static_cast<double>(top_k);
  // Unlimited: each expert on any node with probability 1 / nodes.
  const double unlimited = (nodes - 1.0) * (1.0 - std::pow(1.0 - 1.0 / nodes, k));
  if (routing.groups <= 0 || routing.topk_groups <= 0 || routing.topk_groups >= routing.groups) return unlimited;
  const double g = static_cast<double>(routing.groups), t = static_cast<double>(routing.topk_groups);
  double touched = 0;
  if (g >= nodes) {
    // Whole groups per node: the nodes among t groups drawn from g, g / nodes on each node.
    const double per_node = g / nodes;
    double none_on_a_node = 1.0;  // C(g - per_node, t) / C(g, t)
    for (double i = 0; i < t; ++i) none_on_a_node *= std::max(0.0, (g - per_node - i) / (g - i));
    touched = nodes * (1.0 - none_on_a_node);
  } else {
    // Each group spans nodes / g nodes: the k experts spread over the t groups' nodes.
    const double span = t * nodes / g;
    touched = span * (1.0 - std::pow(1.0 - 1.0 / span, k));
  }
  // By symmetry the token's own node is among them with probability touched / nodes.
  return std::min(unlimited, touched * (1.0 - 1.0 / nodes));
}

double deduplicated_dispatch_time_s(double token_bytes, double tokens, std::int64_t top_k, std::int64_t n,
                                    std::int64_t stride, const Cluster& c, GroupLimitedRouting routing) {
  if (n <= 1 || tokens <= 0 || token_bytes <= 0) return 0.0;
  const double ranks = static_cast<double>(n);
  const double local = members_per_node(n, stride, c);
  const double nodes = std::ceil(ranks / local);
  const double k = static_cast<double>(top_k);
  const double remote_nodes = expected_remote_nodes(nodes, top_k, routing);
  const double inter_bytes = tokens * token_bytes * remote_nodes;
  // Inside each node every copy lands on its expert's GPU over NVLink (local ones and forwarded).
  const double intra_bytes = tokens * token_bytes * k * (local - 1.0) / local;
  const double latency_s = nodes > 1 ? c.inter_node.latency_s : c.intra_node.latency_s;
  return concurrent_send_s(intra_bytes, inter_bytes, c) + latency_s;
}

}  // namespace tessera
