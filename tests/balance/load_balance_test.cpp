// load_balance: the imbalance and lower-bound ratios in closed form.
#include "balance/load_balance.h"

#include <vector>

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(LoadBalance, RatiosOfTheSlowestSlotAndOfTheBoundToTheMean) {
  const std::vector<double> load = {4, 2, 2, 0};  // mean 2
  const LoadBalance b = load_balance(load, 3.0);
  EXPECT_DOUBLE_EQ(b.imbalance, 2.0);    // 4 / 2
  EXPECT_DOUBLE_EQ(b.lower_bound, 1.5);  // largest item 3 / mean 2
  EXPECT_DOUBLE_EQ(load_balance(load, 1.0).lower_bound, 1.0);  // total / slots binds
  const std::vector<double> even = {3, 3, 3};
  EXPECT_DOUBLE_EQ(load_balance(even, 1.0).imbalance, 1.0);
  EXPECT_DOUBLE_EQ(load_balance(std::vector<double>{}, 0).imbalance, 1.0);
  EXPECT_DOUBLE_EQ(load_balance(std::vector<double>{0, 0}, 0).imbalance, 1.0);
}

TEST(LoadBalance, SlotLoadsSumPlacedItemsOnly) {
  const std::vector<double> cost = {1, 2, 4, 8};
  const std::vector<std::int32_t> slot_of = {0, 1, -1, 1};
  EXPECT_EQ(slot_loads(cost, slot_of, 3), (std::vector<double>{1, 10, 0}));
}

}  // namespace
}  // namespace tessera
