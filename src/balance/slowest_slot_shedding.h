// Shedding work from the slowest slot of a step to the next step. A step's samples nearly fill its
// token budget, so when one slot holds the slowest released outlier the others cannot take more
// to catch up; every slot then waits for that one. Moving a short sample out of the slowest slot
// into the next step (it is carried over and goes first there) shortens the step without slowing
// any other slot: with top the slowest load, second the next, and c the sample's time, take the
// largest c <= top - second (the slot stays the slowest or ties) and repeat. Each removal lowers
// the step's imbalance, top x slots / total, since (top - c) / (total - c) < top / total whenever
// total > top.
//
// Since the slot stays the slowest, `second` never changes and every removal comes from the same
// slot: one pass over that slot's samples by decreasing time, O(n log n) in all.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace tessera {

struct SheddingScratch {
  std::vector<double> load;
  std::vector<std::size_t> candidates;
};

// Sets slot_of[i] = kNotPlaced for each shed sample, at most `max_shed` of them; the first
// `keep_first` samples (those placed first in this step) always stay. Returns the number shed.
int shed_from_slowest_slot(std::span<const double> cost, std::size_t keep_first, int slots,
                           std::span<std::int32_t> slot_of, SheddingScratch& scratch,
                           int max_shed = std::numeric_limits<int>::max());

}  // namespace tessera
