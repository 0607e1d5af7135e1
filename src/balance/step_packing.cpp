#include "balance/step_packing.h"

#include <algorithm>

#include "balance/cost_blind_assignment.h"

namespace tessera {

namespace {

void first_fit(std::span<const std::int64_t> tokens, int slots, std::int64_t max_tokens,
               std::span<std::int32_t> slot_of, SlotRoomTree& room) {
  room.reset(slots, max_tokens);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const int slot = room.first_with_room(tokens[i]);
    slot_of[i] = slot < 0 ? kNotPlaced : static_cast<std::int32_t>(slot);
    if (slot >= 0) room.take(slot, tokens[i]);
  }
}

// Equal runs in arrival order; with a cap, a sample over its run's room stays unplaced.
void equal_runs(std::span<const std::int64_t> tokens, int slots, std::int64_t max_tokens,
                std::span<std::int32_t> slot_of, SlotRoomTree& room) {
  const std::vector<std::int32_t> runs = assign_in_arrival_order(tokens.size(), slots);
  std::copy(runs.begin(), runs.end(), slot_of.begin());
  if (max_tokens == 0) return;
  room.reset(slots, max_tokens);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    if (room.room(slot_of[i]) < tokens[i]) {
      slot_of[i] = kNotPlaced;
      continue;
    }
    room.take(slot_of[i], tokens[i]);
  }
}

}  // namespace

void pack_step(std::span<const std::int64_t> tokens, std::span<const double> time_s, int slots,
               std::int64_t max_tokens, PackingRule rule, CountMode count, std::span<std::int32_t> slot_of,
               PackingScratch& scratch, std::size_t placed_first) {
  const LptOptions options{count, max_tokens, placed_first};
  switch (rule) {
    case PackingRule::arrival_order:
      if (max_tokens > 0 && count == CountMode::free) first_fit(tokens, slots, max_tokens, slot_of, scratch.room);
      else equal_runs(tokens, slots, max_tokens, slot_of, scratch.room);
      return;
    case PackingRule::token_greedy:
      scratch.cost.assign(tokens.begin(), tokens.end());
      assign_longest_processing_time(scratch.cost, tokens, slots, options, slot_of, scratch.lpt);
      return;
    case PackingRule::time_greedy:
      assign_longest_processing_time(time_s, tokens, slots, options, slot_of, scratch.lpt);
      return;
  }
}

}  // namespace tessera
