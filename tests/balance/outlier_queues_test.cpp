// Outlier queues: levels by threshold; a level releases one sample per slot only once its group
// balances (or its oldest has waited max_wait_steps); the oldest always leaves with the group;
// at most one balanceable group per step, but every due group; nothing is lost.
#include "balance/outlier_queues.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

namespace tessera {
namespace {

constexpr std::int64_t kCap = 1000;
constexpr double kFillerPerToken = 1.0;  // filler time per token of room

OutlierPolicy two_levels(int max_wait) { return {{250, 500}, max_wait}; }

TEST(OutlierQueues, LevelsFollowTheThresholds) {
  const OutlierQueues q(two_levels(10));
  EXPECT_EQ(q.level_of(249), -1);
  EXPECT_EQ(q.level_of(250), 0);
  EXPECT_EQ(q.level_of(499), 0);
  EXPECT_EQ(q.level_of(500), 1);
  EXPECT_EQ(q.level_of(kCap), 1);
  const OutlierPolicy standard = default_outlier_policy(131072);
  EXPECT_EQ(standard.level_min_tokens, (std::vector<std::int64_t>{32768, 65536}));
  EXPECT_LE(standard.level_min_tokens.size(), 2u);
}

TEST(OutlierQueues, WaitsUntilOnePerSlotThenReleasesABalanceableGroup) {
  OutlierQueues q(two_levels(10));
  std::vector<QueuedItem> out;
  // Time = tokens: a member of t tokens can be topped up by (cap - t) of filler.
  for (int i = 0; i < 3; ++i) q.push({i, 600, 600.0, 0}, 1);
  q.release(0, 4, kCap, kFillerPerToken, out);
  EXPECT_TRUE(out.empty()) << "three samples for four slots: wait";
  q.push({3, 700, 700.0, 1}, 1);
  q.release(1, 4, kCap, kFillerPerToken, out);
  ASSERT_EQ(out.size(), 4u) << "700 - 600 <= 1000 - 600 of filler: balanceable";
  EXPECT_EQ(q.size(), 0u);
  EXPECT_EQ(q.levels_used(), 1);
}

TEST(OutlierQueues, AnUnbalanceableGroupWaitsUntilItsOldestIsDue) {
  OutlierQueues q(two_levels(3));
  std::vector<QueuedItem> out;
  // The 990-token sample takes 2000; a 510-token one plus 490 tokens of filler reaches only 1000.
  q.push({0, 990, 2000.0, 0}, 1);
  for (int i = 1; i < 4; ++i) q.push({i, 510, 510.0, 0}, 1);
  for (int step = 0; step < 3; ++step) {
    q.release(step, 4, kCap, kFillerPerToken, out);
    EXPECT_TRUE(out.empty()) << "step " << step;
  }
  q.release(3, 4, kCap, kFillerPerToken, out);  // waited max_wait_steps: forced
  EXPECT_EQ(out.size(), 4u);
}

TEST(OutlierQueues, TheOldestLeavesWithItsNearestNeighboursOneGroupPerStep) {
  OutlierQueues q(two_levels(100));
  std::vector<QueuedItem> out;
  // Level 0: six samples; the oldest (item 0) is the fastest; level 1: four, all younger.
  const double times[] = {300, 900, 310, 320, 330, 905};
  for (int i = 0; i < 6; ++i) q.push({i, 300, times[i], i == 0 ? 0 : 2}, 0);
  for (int i = 6; i < 10; ++i) q.push({i, 600, 600.0, 3}, 1);
  q.release(4, 4, kCap, kFillerPerToken, out);
  ASSERT_EQ(out.size(), 4u);
  std::vector<std::int64_t> items;
  for (const auto& o : out) items.push_back(o.item);
  std::sort(items.begin(), items.end());
  EXPECT_EQ(items, (std::vector<std::int64_t>{0, 2, 3, 4}));  // the four closest in time
  EXPECT_EQ(q.size(), 6u) << "one group per step: level 1 waits";
  out.clear();
  q.release(5, 4, kCap, kFillerPerToken, out);
  EXPECT_EQ(out.size(), 4u);
  std::vector<std::int64_t> waiting;
  q.append_waiting(waiting);
  std::sort(waiting.begin(), waiting.end());
  EXPECT_EQ(waiting, (std::vector<std::int64_t>{1, 5}));
}

TEST(OutlierQueues, EveryDueGroupLeavesInTheSameStep) {
  // Issue 13: one group per step let due samples pile up, so the wait grew with the input.
  OutlierQueues q(two_levels(2));
  std::vector<QueuedItem> out;
  for (int i = 0; i < 8; ++i) q.push({i, 600, 600.0 * (1 + 10 * i), 0}, 1);  // never balanceable
  q.release(1, 4, kCap, kFillerPerToken, out);
  EXPECT_TRUE(out.empty());
  q.release(2, 4, kCap, kFillerPerToken, out);
  EXPECT_EQ(out.size(), 8u) << "two groups of four, both due";
  EXPECT_EQ(q.size(), 0u);
}

TEST(OutlierQueues, ReleaseOldestAndReleaseAllEmptyTheQueues) {
  OutlierQueues q(two_levels(100));
  std::vector<QueuedItem> out;
  q.push({0, 300, 300.0, 5}, 0);
  q.push({1, 600, 600.0, 3}, 1);
  q.push({2, 600, 9000.0, 4}, 1);
  q.release_oldest(1, kCap, kFillerPerToken, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out.front().item, 1) << "the oldest, with a group of one per slot";
  q.release_all(out);
  EXPECT_EQ(out.size(), 3u);
  EXPECT_EQ(q.size(), 0u);
}

}  // namespace
}  // namespace tessera
