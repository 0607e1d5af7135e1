// Assignments that ignore cost, the baselines the balancer is measured against:
//   arrival order  slot s takes the s-th contiguous run of items, runs differing by at most one
//                  item (a plain sampler cutting the batch into micro-batches and ranks)
//   random         the same after a seeded shuffle (PyTorch's DistributedSampler with shuffle)
#pragma once

#include <cstdint>
#include <vector>

namespace tessera {

std::vector<std::int32_t> assign_in_arrival_order(std::size_t items, int slots);
std::vector<std::int32_t> assign_at_random(std::size_t items, int slots, std::uint64_t seed);

}  // namespace tessera
