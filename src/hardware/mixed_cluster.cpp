#include "hardware/mixed_cluster.h"

#include <algorithm>

#include "core/checks.h"
#include "core/error.h"
#include "core/units.h"
#include "hardware/physical_ranges.h"

namespace tessera {

namespace {
// Pools of one cluster: the mixed planner searches whole replicas over every subset of pools and
// one pipeline over every order of them; 3 pools finish within 10 s at 3 x 4,096 GPUs (llama3-70b
// 8.0 s, llama3.1-405b 6.4 s, README "Limits"), 4 pools of 8 GPUs took 11.7 s and of 1,024
// GPUs 187 s.
constexpr std::size_t kMaxPools = 3;
}  // namespace

void MixedCluster::validate() const {
  if (pools.empty() || pools.size() > kMaxPools)
    throw Error("cluster.pools", "got " + std::to_string(pools.size()) + " pools",
                "1 to " + std::to_string(kMaxPools) + " pools");
  for (const auto& p : pools) p.validate();
  if (pools.size() > 1) {
    // An aggregate link: at most every GPU of the smaller pool at the per-GPU bandwidth bound
    // (a 100,000-GPU pool's NICs together carry petabytes per second).
    std::int64_t smaller = pools.front().gpus();
    for (const auto& p : pools) smaller = std::min(smaller, p.gpus());
    const double max_gbps = static_cast<double>(smaller) * physical::kMaxBandwidthGbps;
    const double gbps = inter_pool.bandwidth_bytes_per_s / units::gbps_to_bytes_per_s(1.0);
    require_in_range("cluster.inter_pool_gbps", gbps, physical::kMinBandwidthGbps, max_gbps, "Gbit/s");
  }
}

}  // namespace tessera
