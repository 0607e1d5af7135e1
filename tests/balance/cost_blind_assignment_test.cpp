// Arrival-order and random assignments: counts within one, contiguous runs for arrival order,
// random = the same runs permuted (seeded, deterministic).
#include "balance/cost_blind_assignment.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

namespace tessera {
namespace {

std::vector<int> counts(const std::vector<std::int32_t>& slot_of, int slots) {
  std::vector<int> c(static_cast<std::size_t>(slots), 0);
  for (auto s : slot_of) ++c[static_cast<std::size_t>(s)];
  return c;
}

TEST(CostBlindAssignment, ArrivalOrderCutsContiguousRunsOfNearlyEqualLength) {
  const auto slot_of = assign_in_arrival_order(10, 4);
  EXPECT_EQ(slot_of, (std::vector<std::int32_t>{0, 0, 0, 1, 1, 1, 2, 2, 3, 3}));
  EXPECT_TRUE(std::is_sorted(slot_of.begin(), slot_of.end()));
  EXPECT_EQ(counts(assign_in_arrival_order(3, 5), 5), (std::vector<int>{1, 1, 1, 0, 0}));
}

TEST(CostBlindAssignment, RandomKeepsTheCountsAndDependsOnlyOnTheSeed) {
  const auto a = assign_at_random(1001, 8, 42);
  EXPECT_EQ(counts(a, 8), counts(assign_in_arrival_order(1001, 8), 8));
  EXPECT_EQ(a, assign_at_random(1001, 8, 42));
  EXPECT_NE(a, assign_at_random(1001, 8, 43));
  EXPECT_FALSE(std::is_sorted(a.begin(), a.end()));
}

}  // namespace
}  // namespace tessera
