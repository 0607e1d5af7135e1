#include "balance/step_packing.h"

#include <algorithm>

#include "balance/cost_blind_assignment.h"

namespace tessera {

namespace {

void next_fit(std::span<const std::int64_t> tokens, int slots, std::int64_t max_tokens,
              std::span<std::int32_t> slot_of) {
  std::int32_t slot = 0;
  std::int64_t used = 0;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    while (slot < slots && used + tokens[i] > max_tokens) {
      ++slot;
      used = 0;
    }
    if (slot == slots) {
      slot_of[i] = kNotPlaced;
      continue;
    }
    slot_of[i] = slot;
    used += tokens[i];
  }
}

}  // namespace

void pack_step(std::span<const std::int64_t> tokens, std::span<const double> time_s, int slots,
               std::int64_t max_tokens, PackingRule rule, CountMode count, std::span<std::int32_t> slot_of,
               PackingScratch& scratch) {
  switch (rule) {
    case PackingRule::arrival_order:
      if (max_tokens > 0) {
        next_fit(tokens, slots, max_tokens, slot_of);
      } else {
        const std::vector<std::int32_t> runs = assign_in_arrival_order(tokens.size(), slots);
        std::copy(runs.begin(), runs.end(), slot_of.begin());
      }
      return;
    case PackingRule::token_greedy:
      scratch.cost.assign(tokens.begin(), tokens.end());
      assign_longest_processing_time(scratch.cost, tokens, slots, {count, max_tokens}, slot_of, scratch.lpt);
      return;
    case PackingRule::time_greedy:
      assign_longest_processing_time(time_s, tokens, slots, {count, max_tokens}, slot_of, scratch.lpt);
      return;
  }
}

}  // namespace tessera
