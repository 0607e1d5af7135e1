// How evenly work is spread over slots (a slot is one data-parallel rank's micro-batch):
//   imbalance    slowest slot x slots / total: 1 is perfect, the slowest slot's excess over the
//                mean is what every other slot waits for (WLB-LLM, OSDI'25, §3's imbalance degree)
//   lower bound  the same ratio for max(largest item, total / slots): no assignment of these items
//                to these slots can do better
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tessera {

struct LoadBalance {
  double imbalance = 1.0;
  double lower_bound = 1.0;
};

// Empty or all-zero loads balance perfectly (1, 1).
LoadBalance load_balance(std::span<const double> slot_load, double largest_item);

// Sum of each slot's item costs; items with slot_of == kNotPlaced (negative) are skipped.
std::vector<double> slot_loads(std::span<const double> cost, std::span<const std::int32_t> slot_of, int slots);

}  // namespace tessera
