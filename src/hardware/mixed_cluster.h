// MixedCluster: pools of different GPU types (e.g. 64 x H100 + 128 x A100), each a Cluster with
// its own node size and links, joined by a slower link between pools.
#pragma once

#include <vector>

#include "hardware/cluster.h"

namespace tessera {

struct MixedCluster {
  std::vector<Cluster> pools;
  // Aggregate bandwidth between two pools (all their cross-pool links together), one direction.
  LinkTier inter_pool;

  std::int64_t gpus() const {
    std::int64_t total = 0;
    for (const auto& p : pools) total += p.gpus();
    return total;
  }
  void validate() const;  // throws Error("cluster.pools", ...)
};

}  // namespace tessera
