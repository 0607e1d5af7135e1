#include "balance/load_balance.h"

#include <algorithm>

namespace tessera {

LoadBalance load_balance(std::span<const double> slot_load, double largest_item) {
  double total = 0, slowest = 0;
  for (double load : slot_load) {
    total += load;
    slowest = std::max(slowest, load);
  }
  if (slot_load.empty() || total <= 0) return {};
  const double slots = static_cast<double>(slot_load.size());
  return {slowest * slots / total, std::max(largest_item, total / slots) * slots / total};
}

std::vector<double> slot_loads(std::span<const double> cost, std::span<const std::int32_t> slot_of, int slots) {
  std::vector<double> load(static_cast<std::size_t>(slots), 0.0);
  for (std::size_t i = 0; i < cost.size(); ++i)
    if (slot_of[i] >= 0) load[static_cast<std::size_t>(slot_of[i])] += cost[i];
  return load;
}

}  // namespace tessera
