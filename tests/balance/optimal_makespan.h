// Test helper: the optimal makespan of n items on m slots by exhaustive branch and bound (items in
// decreasing cost; an item goes to at most one of the still-empty slots, which are alike; branches
// that cannot beat the best found are cut). Exact, and fast for n <= 12.
#pragma once

#include <algorithm>
#include <functional>
#include <vector>

namespace tessera::testing {

inline double optimal_makespan(std::vector<double> cost, int slots) {
  std::sort(cost.begin(), cost.end(), std::greater<>());
  double total = 0;
  for (double c : cost) total += c;
  const double lower = std::max(cost.empty() ? 0.0 : cost.front(), total / slots);
  std::vector<double> load(static_cast<std::size_t>(slots), 0.0);
  double best = total;  // everything on one slot
  std::function<void(std::size_t, double)> place = [&](std::size_t i, double makespan) {
    if (makespan >= best) return;
    if (i == cost.size()) {
      best = makespan;
      return;
    }
    for (std::size_t s = 0; s < load.size(); ++s) {
      if (best <= lower) return;  // cannot do better than the lower bound
      load[s] += cost[i];
      place(i + 1, std::max(makespan, load[s]));
      load[s] -= cost[i];
      if (load[s] == 0) break;  // the other empty slots would repeat this branch
    }
  };
  place(0, 0.0);
  return best;
}

}  // namespace tessera::testing
