// Packing one step's samples into its slots (slot = micro-batch x data-parallel rank), each slot
// holding at most max_tokens backbone tokens when there is a cap:
//   arrival_order  no balancing: with a cap, fill slot 0 in arrival order until the next sample does
//                  not fit, then slot 1, ... (next fit); without one, equal runs of samples
//   token_greedy   fixed-length packing: samples by decreasing tokens, each to the slot with the
//                  fewest tokens that has room (balances tokens, not time)
//   time_greedy    variable-length packing: samples by decreasing predicted time, each to the
//                  least-loaded slot with room (WLB-LLM, OSDI'25, §4.1's greedy heuristic), i.e.
//                  longest processing time under a token cap
// Samples that fit in no slot are left unplaced for the caller to carry over.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "balance/longest_processing_time.h"

namespace tessera {

enum class PackingRule { arrival_order, token_greedy, time_greedy };

struct PackingScratch {
  LptScratch lpt;
  std::vector<double> cost;
};

// slot_of[i] = the slot of sample i, or kNotPlaced. `tokens` and `time_s` are per sample.
void pack_step(std::span<const std::int64_t> tokens, std::span<const double> time_s, int slots,
               std::int64_t max_tokens, PackingRule rule, CountMode count, std::span<std::int32_t> slot_of,
               PackingScratch& scratch);

}  // namespace tessera
