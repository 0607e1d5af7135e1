// One step's packing rules in closed form: next fit in arrival order, token-balancing fixed-length
// greedy, time-balancing variable-length greedy; caps respected.
#include "balance/step_packing.h"

#include <vector>

#include <gtest/gtest.h>

#include "balance/load_balance.h"

namespace tessera {
namespace {

std::vector<std::int32_t> pack(const std::vector<std::int64_t>& tokens, const std::vector<double>& time, int slots,
                               std::int64_t cap, PackingRule rule) {
  std::vector<std::int32_t> slot_of(tokens.size());
  PackingScratch scratch;
  pack_step(tokens, time, slots, cap, rule, CountMode::free, slot_of, scratch);
  return slot_of;
}

TEST(StepPacking, ArrivalOrderIsNextFitWithACapAndEqualRunsWithout) {
  const std::vector<std::int64_t> tokens = {6, 3, 2, 5, 4, 7};
  const std::vector<double> time = {1, 1, 1, 1, 1, 1};
  // Cap 10: [6 3] [2 5] [4] then 7 fits nowhere (next fit never looks back).
  EXPECT_EQ(pack(tokens, time, 3, 10, PackingRule::arrival_order), (std::vector<std::int32_t>{0, 0, 1, 1, 2, -1}));
  EXPECT_EQ(pack(tokens, time, 3, 0, PackingRule::arrival_order), (std::vector<std::int32_t>{0, 0, 1, 1, 2, 2}));
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
