#include "hardware/mixed_cluster.h"

#include "core/checks.h"
#include "core/error.h"

namespace tessera {

namespace {
constexpr std::size_t kMaxPools = 8;
}  // namespace

void MixedCluster::validate() const {
  if (pools.empty() || pools.size() > kMaxPools)
    throw Error("cluster.pools", "got " + std::to_string(pools.size()) + " pools",
                "1 to " + std::to_string(kMaxPools) + " pools");
  for (const auto& p : pools) p.validate();
  if (pools.size() > 1)
    require_positive_real("cluster.inter_pool_gbps", inter_pool.bandwidth_bytes_per_s, 1e15);
}

}  // namespace tessera
