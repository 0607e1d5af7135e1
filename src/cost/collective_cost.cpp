#include "cost/collective_cost.h"

#include <algorithm>

namespace tessera {

GroupLink group_link(const Cluster& c, std::int64_t stride, std::int64_t size) {
  if (size <= 1) return {c.intra_node.bandwidth_bytes_per_s, 0.0};
  if (stride * size <= c.gpus_per_node) return {c.intra_node.bandwidth_bytes_per_s, c.intra_node.latency_s};
  const std::int64_t members_per_node = std::max<std::int64_t>(1, c.gpus_per_node / stride);
  const double bw = std::min(c.intra_node.bandwidth_bytes_per_s,
                             static_cast<double>(members_per_node) * c.inter_node.bandwidth_bytes_per_s);
  return {bw, c.inter_node.latency_s};
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
  return all_gather_time_s(bytes, n, link);
}

double p2p_time_s(double bytes, const GroupLink& link) {
  if (bytes <= 0) return 0.0;
  return bytes / link.bandwidth_bytes_per_s + link.latency_s;
}

}  // namespace tessera
