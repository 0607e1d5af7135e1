// One step's packing rules in closed form: first fit in arrival order (equal runs with equal
// count), token-balancing fixed-length greedy, time-balancing variable-length greedy; caps
// respected; the samples placed first always find a slot.
#include "balance/step_packing.h"

#include <vector>

#include <gtest/gtest.h>

#include "balance/load_balance.h"

namespace tessera {
namespace {

std::vector<std::int32_t> pack(const std::vector<std::int64_t>& tokens, const std::vector<double>& time, int slots,
                               std::int64_t cap, PackingRule rule, CountMode count = CountMode::free,
                               std::size_t placed_first = 0) {
  std::vector<std::int32_t> slot_of(tokens.size());
  PackingScratch scratch;
  pack_step(tokens, time, slots, cap, rule, count, slot_of, scratch, placed_first);
  return slot_of;
}

TEST(StepPacking, ArrivalOrderIsFirstFitWithACapAndEqualRunsWithout) {
  const std::vector<std::int64_t> tokens = {6, 3, 2, 5, 4, 7};
  const std::vector<double> time = {1, 1, 1, 1, 1, 1};
  // Cap 10: [6 3] [2 5] [4] then 7 fits nowhere (rooms 1, 3, 6).
  EXPECT_EQ(pack(tokens, time, 3, 10, PackingRule::arrival_order), (std::vector<std::int32_t>{0, 0, 1, 1, 2, -1}));
  EXPECT_EQ(pack(tokens, time, 3, 0, PackingRule::arrival_order), (std::vector<std::int32_t>{0, 0, 1, 1, 2, 2}));
  // First fit looks back: the 3 goes to slot 0's room of 4 (next fit had closed slot 0).
  EXPECT_EQ(pack({6, 5, 6, 3}, {1, 1, 1, 1}, 2, 10, PackingRule::arrival_order),
            (std::vector<std::int32_t>{0, 1, -1, 0}));
}

TEST(StepPacking, ArrivalOrderWithEqualCountCutsEqualRunsUnderTheCap) {
  // Issue 13, S2: with equal count (a batch size) no micro-batch is empty, cap or not.
  const std::vector<std::int64_t> tokens(4, 100);
  const std::vector<double> time(4, 1.0);
  EXPECT_EQ(pack(tokens, time, 2, 4096, PackingRule::arrival_order, CountMode::equal),
            (std::vector<std::int32_t>{0, 0, 1, 1}));
  // A sample over its run's room is left out, not moved to another run.
  EXPECT_EQ(pack({100, 3900, 100, 100}, {1, 1, 1, 1}, 2, 4096, PackingRule::arrival_order, CountMode::equal),
            (std::vector<std::int32_t>{0, 0, 1, 1}));
  EXPECT_EQ(pack({200, 4000, 100, 100}, {1, 1, 1, 1}, 2, 4096, PackingRule::arrival_order, CountMode::equal),
            (std::vector<std::int32_t>{0, -1, 1, 1}));
}

TEST(StepPacking, SamplesPlacedFirstAlwaysFindASlot) {
  // Items 0 and 1 are placed first: each takes a still-empty slot although the greedy would
  // have filled both slots with the two big new ones first.
  const std::vector<std::int64_t> tokens = {6, 6, 9, 9};
  const std::vector<double> time = {1, 1, 10, 10};
  for (PackingRule rule : {PackingRule::arrival_order, PackingRule::token_greedy, PackingRule::time_greedy}) {
    const auto slot_of = pack(tokens, time, 2, 10, rule, CountMode::free, 2);
    EXPECT_NE(slot_of[0], -1);
    EXPECT_NE(slot_of[1], -1);
    EXPECT_NE(slot_of[0], slot_of[1]);
  }
  EXPECT_EQ(pack(tokens, time, 2, 10, PackingRule::time_greedy), (std::vector<std::int32_t>{-1, -1, 0, 1}));
}

TEST(StepPacking, FixedGreedyBalancesTokensNotTime) {
  // Two slots: one long document (8 tokens, slow) against short ones (4 x 2 tokens, fast).
  const std::vector<std::int64_t> tokens = {8, 2, 2, 2, 2};
  const std::vector<double> time = {64, 2, 2, 2, 2};
  const auto fixed = pack(tokens, time, 2, 8, PackingRule::token_greedy);
  const auto tokens_per_slot = slot_loads(std::vector<double>{8, 2, 2, 2, 2}, fixed, 2);
  EXPECT_EQ(tokens_per_slot, (std::vector<double>{8, 8}));
  const auto timed = pack(tokens, time, 2, 0, PackingRule::time_greedy);
  const auto load = slot_loads(time, timed, 2);
  EXPECT_EQ(load, (std::vector<double>{64, 8}));  // the best possible: the long one alone
}

TEST(StepPacking, TimeGreedyRespectsTheCapAndLeavesWhatFitsNowhere) {
  const std::vector<std::int64_t> tokens = {9, 9, 9, 2};
  const std::vector<double> time = {10, 10, 10, 1};
  const auto slot_of = pack(tokens, time, 2, 10, PackingRule::time_greedy);
  EXPECT_EQ(slot_of, (std::vector<std::int32_t>{0, 1, -1, -1}));
}

}  // namespace
}  // namespace tessera
