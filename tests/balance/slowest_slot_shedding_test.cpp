// Shedding: only from the slowest slot, never below the next slowest, never a kept sample, and
// each removal lowers the imbalance (top x slots / total).
#include "balance/slowest_slot_shedding.h"

#include <vector>

#include <gtest/gtest.h>

#include "balance/load_balance.h"
#include "balance/longest_processing_time.h"

namespace tessera {
namespace {

TEST(SlowestSlotShedding, ShedsTheLargestSampleThatKeepsTheSlotSlowest) {
  // Slot 0: a kept outlier of 10 plus fillers 3, 2, 1 (16); slot 1: 12.
  const std::vector<double> cost = {10, 12, 3, 2, 1};
  std::vector<std::int32_t> slot_of = {0, 1, 0, 0, 0};
  SheddingScratch scratch;
  const double before = load_balance(slot_loads(cost, slot_of, 2), 12).imbalance;
  // Room 4: shed 3 (slot 0 -> 13), room 1: shed 1 (-> 12); the 2 would overshoot.
  EXPECT_EQ(shed_from_slowest_slot(cost, 1, 2, slot_of, scratch), 2);
  EXPECT_EQ(slot_of, (std::vector<std::int32_t>{0, 1, kNotPlaced, 0, kNotPlaced}));
  EXPECT_LT(load_balance(slot_loads(cost, slot_of, 2), 12).imbalance, before);
}

TEST(SlowestSlotShedding, KeepsReleasedOutliersAndDoesNothingOnOneSlot) {
  const std::vector<double> cost = {5, 1};
  std::vector<std::int32_t> slot_of = {0, 1};
  SheddingScratch scratch;
  EXPECT_EQ(shed_from_slowest_slot(cost, 1, 2, slot_of, scratch), 0) << "the 5 is kept; the 1 is not in the slowest slot";
  std::vector<std::int32_t> one = {0, 0};
  EXPECT_EQ(shed_from_slowest_slot(cost, 0, 1, one, scratch), 0);
}

}  // namespace
}  // namespace tessera
