#include "balance/stream_metrics.h"

#include <algorithm>
#include <vector>

#include "balance/cost_blind_assignment.h"

namespace tessera {

namespace {

// Averages LoadBalance over steps; `slot_of_step(step, k)` gives the slot of the step's k-th placement.
template <typename SlotOf>
LoadBalance mean_over_steps(const StreamResult& result, std::span<const double> cost, int slots, SlotOf slot_of_step) {
  std::vector<double> load(static_cast<std::size_t>(slots));
  LoadBalance sum{0.0, 0.0};
  int counted = 0;
  for (std::size_t step = 0; step < result.steps.size(); ++step) {
    const auto& placements = result.steps[step].placements;
    std::fill(load.begin(), load.end(), 0.0);
    double largest = 0, total = 0;
    for (std::size_t k = 0; k < placements.size(); ++k) {
      const double c = cost[static_cast<std::size_t>(placements[k].item)];
      load[static_cast<std::size_t>(slot_of_step(step, k))] += c;
      largest = std::max(largest, c);
      total += c;
    }
    if (total <= 0) continue;
    const LoadBalance b = load_balance(load, largest);
    sum.imbalance += b.imbalance;
    sum.lower_bound += b.lower_bound;
    ++counted;
  }
  if (counted == 0) return {};
  return {sum.imbalance / counted, sum.lower_bound / counted};
}

}  // namespace

LoadBalance mean_load_balance(const StreamResult& result, std::span<const double> cost, int slots) {
  return mean_over_steps(result, cost, slots,
                         [&](std::size_t step, std::size_t k) { return result.steps[step].placements[k].slot; });
}

LoadBalance mean_random_load_balance(const StreamResult& result, std::span<const double> cost, int slots,
                                     std::uint64_t seed) {
  std::vector<std::vector<std::int32_t>> random(result.steps.size());
  for (std::size_t step = 0; step < result.steps.size(); ++step)
    random[step] = assign_at_random(result.steps[step].placements.size(), slots, seed + step);
  return mean_over_steps(result, cost, slots, [&](std::size_t step, std::size_t k) { return random[step][k]; });
}

}  // namespace tessera
