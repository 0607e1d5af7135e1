#include "balance/slowest_slot_shedding.h"

#include <algorithm>

#include "balance/longest_processing_time.h"

namespace tessera {

int shed_from_slowest_slot(std::span<const double> cost, std::size_t keep_first, int slots,
                           std::span<std::int32_t> slot_of, SheddingScratch& scratch, int max_shed) {
  if (slots < 2 || max_shed <= 0) return 0;  // one slot: nothing waits for it
  auto& load = scratch.load;
  load.assign(static_cast<std::size_t>(slots), 0.0);
  for (std::size_t i = 0; i < cost.size(); ++i)
    if (slot_of[i] >= 0) load[static_cast<std::size_t>(slot_of[i])] += cost[i];
  const auto h = static_cast<std::int32_t>(std::max_element(load.begin(), load.end()) - load.begin());
  double second = 0;
  for (std::size_t s = 0; s < load.size(); ++s)
    if (s != static_cast<std::size_t>(h)) second = std::max(second, load[s]);
  auto& candidates = scratch.candidates;
  candidates.clear();
  for (std::size_t i = keep_first; i < cost.size(); ++i)
    if (slot_of[i] == h && cost[i] > 0) candidates.push_back(i);
  // Decreasing time, ties to the lower index: each pick is the largest that still fits the room.
  std::sort(candidates.begin(), candidates.end(),
            [&](std::size_t a, std::size_t b) { return cost[a] != cost[b] ? cost[a] > cost[b] : a < b; });
  double room = load[static_cast<std::size_t>(h)] - second;
  int shed = 0;
  for (std::size_t i : candidates) {
    if (shed == max_shed) break;
    if (cost[i] > room) continue;  // the room only shrinks: it never fits later
    room -= cost[i];
    slot_of[i] = kNotPlaced;
    ++shed;
  }
  return shed;
}

}  // namespace tessera
