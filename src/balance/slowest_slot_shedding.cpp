#include "balance/slowest_slot_shedding.h"

#include <algorithm>

#include "balance/longest_processing_time.h"

namespace tessera {

int shed_from_slowest_slot(std::span<const double> cost, std::size_t keep_first, int slots,
                           std::span<std::int32_t> slot_of, std::vector<double>& load) {
  if (slots < 2) return 0;  // one slot: nothing waits for it
  load.assign(static_cast<std::size_t>(slots), 0.0);
  for (std::size_t i = 0; i < cost.size(); ++i)
    if (slot_of[i] >= 0) load[static_cast<std::size_t>(slot_of[i])] += cost[i];
  int shed = 0;
  for (;;) {
    const auto h = static_cast<std::size_t>(std::max_element(load.begin(), load.end()) - load.begin());
    double second = 0;
    for (std::size_t s = 0; s < load.size(); ++s)
      if (s != h) second = std::max(second, load[s]);
    const double room = load[h] - second;
    std::size_t pick = cost.size();
    for (std::size_t i = keep_first; i < cost.size(); ++i)
      if (slot_of[i] == static_cast<std::int32_t>(h) && cost[i] > 0 && cost[i] <= room &&
          (pick == cost.size() || cost[i] > cost[pick]))
        pick = i;
    if (pick == cost.size()) return shed;
    load[h] -= cost[pick];
    slot_of[pick] = kNotPlaced;
    ++shed;
  }
}

}  // namespace tessera
