#include "balance/longest_processing_time.h"

#include <algorithm>

namespace tessera {

namespace {
// Slots tried in load order before a capped item in free-count mode goes to the lowest slot with
// room instead (the room tree): without it an item that only a few slots can hold popped every
// token-full, lightly loaded slot first, O(slots) per item (issue 13: a million slots ran > 20 s).
constexpr std::size_t kMaxSkippedSlots = 16;
// Min-heap order on (load, slot) for std::push_heap / pop_heap, which keep the largest on top.
bool heavier(const LptScratch::Slot& a, const LptScratch::Slot& b) {
  return a.load != b.load ? a.load > b.load : a.slot > b.slot;
}
}  // namespace

void assign_longest_processing_time(std::span<const double> cost, std::span<const std::int64_t> tokens, int slots,
                                    const LptOptions& options, std::span<std::int32_t> slot_of, LptScratch& scratch) {
  const std::size_t n = cost.size();
  const bool capped = options.max_tokens > 0;
  auto& order = scratch.order;
  order.resize(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = {cost[i], static_cast<std::int64_t>(i)};
  const auto first = static_cast<std::int64_t>(options.placed_first);
  std::sort(order.begin(), order.end(), [first](const LptScratch::Item& a, const LptScratch::Item& b) {
    if ((a.index < first) != (b.index < first)) return a.index < first;
    return a.cost != b.cost ? a.cost > b.cost : a.index < b.index;
  });

  const auto m = static_cast<std::size_t>(slots);
  scratch.slot_count.assign(m, 0);
  if (capped) scratch.room.reset(slots, options.max_tokens);
  auto& heap = scratch.heap;
  heap.clear();
  for (int s = 0; s < slots; ++s) heap.push_back({0.0, s});
  std::make_heap(heap.begin(), heap.end(), heavier);
  scratch.skipped.clear();
  scratch.skipped.reserve(m);

  // Equal count: q items per slot, r slots take one more.
  const auto items = static_cast<std::int64_t>(n);
  const std::int64_t q = items / slots, r = items % slots;
  std::int64_t slots_above_q = 0;
  auto eligible = [&](std::int32_t s) {
    if (options.count == CountMode::free) return true;
    const std::int64_t c = scratch.slot_count[static_cast<std::size_t>(s)];
    return c < q || (c == q && slots_above_q < r);
  };

  auto& load = scratch.load;
  load.assign(m, 0.0);
  const bool bounded_skips = capped && options.count == CountMode::free;
  for (const LptScratch::Item& item : order) {
    const auto i = static_cast<std::size_t>(item.index);
    slot_of[i] = kNotPlaced;
    const std::int64_t t = capped ? tokens[i] : 0;
    if (capped && t > scratch.room.largest_room()) continue;
    while (!heap.empty()) {
      if (bounded_skips && scratch.skipped.size() == kMaxSkippedSlots) {
        const int s = scratch.room.first_with_room(t);  // exists: t <= the largest room
        slot_of[i] = s;
        scratch.room.take(s, t);
        load[static_cast<std::size_t>(s)] += item.cost;
        heap.push_back({load[static_cast<std::size_t>(s)], s});  // its older entry is now stale
        std::push_heap(heap.begin(), heap.end(), heavier);
        break;
      }
      std::pop_heap(heap.begin(), heap.end(), heavier);
      const LptScratch::Slot top = heap.back();
      heap.pop_back();
      if (top.load != load[static_cast<std::size_t>(top.slot)]) continue;  // stale entry
      if (!eligible(top.slot)) continue;  // counts only grow: never eligible again
      const auto s = static_cast<std::size_t>(top.slot);
      if (capped && scratch.room.room(top.slot) < t) {
        scratch.skipped.push_back(top);
        continue;
      }
      slot_of[i] = top.slot;
      if (capped) scratch.room.take(top.slot, t);
      if (++scratch.slot_count[s] == q + 1) ++slots_above_q;
      load[s] = top.load + item.cost;
      heap.push_back({load[s], top.slot});
      std::push_heap(heap.begin(), heap.end(), heavier);
      break;
    }
    for (const LptScratch::Slot& s : scratch.skipped) {
      heap.push_back(s);
      std::push_heap(heap.begin(), heap.end(), heavier);
    }
    scratch.skipped.clear();
  }
}

std::vector<std::int32_t> assign_longest_processing_time(std::span<const double> cost, int slots, CountMode count) {
  std::vector<std::int32_t> slot_of(cost.size(), kNotPlaced);
  LptScratch scratch;
  assign_longest_processing_time(cost, {}, slots, {count, 0}, slot_of, scratch);
  return slot_of;
}

}  // namespace tessera
