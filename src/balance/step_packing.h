// Packing one step's samples into its slots (slot = micro-batch x data-parallel rank), each slot
// holding at most max_tokens backbone tokens when there is a cap:
//   arrival_order  no balancing: with a cap, each sample in arrival order to the lowest slot with
//                  room (first fit; next fit left behind samples that a later slot had room for,
//                  and so carried them step after step); with equal count, or without a cap,
//                  equal runs of samples (a sample over its run's cap is left unplaced)
//   token_greedy   fixed-length packing: samples by decreasing tokens, each to the slot with the
//                  fewest tokens that has room (balances tokens, not time)
//   time_greedy    variable-length packing: samples by decreasing predicted time, each to the
//                  least-loaded slot with room (WLB-LLM, OSDI'25, §4.1's greedy heuristic), i.e.
//                  longest processing time under a token cap
// Samples that fit in no slot are left unplaced for the caller to carry over. The first
// `placed_first` samples go before the others (arrival_order: they come first anyway); with
// placed_first <= slots and free count each of them is placed, since a slot is still empty.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "balance/longest_processing_time.h"
#include "balance/slot_room_tree.h"

namespace tessera {

enum class PackingRule { arrival_order, token_greedy, time_greedy };

struct PackingScratch {
  LptScratch lpt;
  std::vector<double> cost;
  SlotRoomTree room;
};

// slot_of[i] = the slot of sample i, or kNotPlaced. `tokens` and `time_s` are per sample.
void pack_step(std::span<const std::int64_t> tokens, std::span<const double> time_s, int slots,
               std::int64_t max_tokens, PackingRule rule, CountMode count, std::span<std::int32_t> slot_of,
               PackingScratch& scratch, std::size_t placed_first = 0);

}  // namespace tessera
