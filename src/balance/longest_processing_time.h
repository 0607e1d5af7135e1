// Longest processing time first (Graham 1969, "Bounds on multiprocessing timing anomalies",
// SIAM J. Appl. Math. 17(2)): take the items in decreasing cost and give each to the least-loaded
// slot. Its makespan is at most (4/3 - 1/(3m)) x the optimum on m slots (Graham's Theorem 2).
//
// Two constraints that the balancer needs, both optional:
//   equal count  every slot gets floor(n/m) or ceil(n/m) items, so modules with different
//                data-parallel sizes see the same number of samples per rank (the bound above
//                holds for the unconstrained mode only)
//   token cap    a slot holds at most max_tokens tokens; an item that fits in no slot is left
//                unplaced (the caller carries it over); after 16 least-loaded slots without room
//                (free count) it goes to the lowest slot with room, so each item costs O(log m)
//   placed first items [0, placed_first) go before all others (by decreasing cost among
//                themselves): the stream balancer's oldest waiting samples. With placed_first <=
//                slots each of them finds a slot that is still empty, so it is always placed.
// Ties go to the lower item index and the lower slot: the result is a pure function of the input.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "balance/slot_room_tree.h"

namespace tessera {

enum class CountMode { free, equal };

inline constexpr std::int32_t kNotPlaced = -1;

struct LptOptions {
  CountMode count = CountMode::free;
  std::int64_t max_tokens = 0;  // per slot; 0 = no cap
  std::size_t placed_first = 0;
};

// Buffers kept between calls: once grown, balancing allocates nothing.
struct LptScratch {
  struct Item {
    double cost;
    std::int64_t index;
  };
  struct Slot {
    double load;
    std::int32_t slot;
  };
  std::vector<Item> order;
  std::vector<Slot> heap;
  std::vector<Slot> skipped;
  std::vector<std::int64_t> slot_count;
  std::vector<double> load;  // current load per slot; heap entries with another load are stale
  SlotRoomTree room;  // with a cap: an item larger than every room is unplaced at once
};

// slot_of[i] = the slot of item i, or kNotPlaced. `tokens` may be empty when there is no cap.
// Preconditions: slots >= 1, costs finite and >= 0, slot_of.size() == cost.size().
void assign_longest_processing_time(std::span<const double> cost, std::span<const std::int64_t> tokens, int slots,
                                    const LptOptions& options, std::span<std::int32_t> slot_of, LptScratch& scratch);

// Convenience form without a cap.
std::vector<std::int32_t> assign_longest_processing_time(std::span<const double> cost, int slots,
                                                         CountMode count = CountMode::free);

}  // namespace tessera
