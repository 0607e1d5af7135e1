#include "balance/cost_blind_assignment.h"

#include <numeric>
#include <span>

#include "core/seeded_random.h"

namespace tessera {

std::vector<std::int32_t> assign_in_arrival_order(std::size_t items, int slots) {
  std::vector<std::int32_t> slot_of(items);
  const auto m = static_cast<std::size_t>(slots);
  const std::size_t q = items / m, r = items % m;
  std::size_t i = 0;
  for (std::size_t s = 0; s < m; ++s)
    for (std::size_t k = 0; k < q + (s < r ? 1 : 0); ++k) slot_of[i++] = static_cast<std::int32_t>(s);
  return slot_of;
}

std::vector<std::int32_t> assign_at_random(std::size_t items, int slots, std::uint64_t seed) {
  std::vector<std::int32_t> runs = assign_in_arrival_order(items, slots);
  SeededRandom random(seed);
  random.shuffle(std::span<std::int32_t>(runs));
  return runs;
}

}  // namespace tessera
