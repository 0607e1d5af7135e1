// Longest processing time: Graham's bound (4/3 - 1/(3m)) x optimum on 10,000 random small cases
// (optimum by exhaustive search), never below the lower bound max(largest, total / m); the bound is
// tight on Graham's example; equal-count mode keeps counts within one; a token cap is never
// exceeded and an item is left out only when no slot has room for it.
#include "balance/longest_processing_time.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "balance/load_balance.h"
#include "optimal_makespan.h"

namespace tessera {
namespace {

constexpr int kLptCases = 10'000;
constexpr double kLptEps = 1e-9;

double lpt_makespan(const std::vector<double>& cost, const std::vector<std::int32_t>& slot_of, int slots) {
  const auto load = slot_loads(cost, slot_of, slots);
  return *std::max_element(load.begin(), load.end());
}

// Random small instance: n in [1, 10], m in [1, 4]; half with few distinct integer costs (ties).
std::vector<double> random_costs(std::mt19937_64& rng, int& slots) {
  slots = static_cast<int>(rng() % 4) + 1;
  const int n = static_cast<int>(rng() % 10) + 1;
  std::vector<double> cost(static_cast<std::size_t>(n));
  const bool integer = rng() % 2 == 0;
  for (double& c : cost)
    c = integer ? static_cast<double>(rng() % 10 + 1) : std::uniform_real_distribution<double>(0.01, 1.0)(rng);
  return cost;
}

TEST(LongestProcessingTime, WithinGrahamsBoundOfTheOptimumOn10000Cases) {
  std::mt19937_64 rng(2024);
  double worst_ratio = 0;
  for (int k = 0; k < kLptCases; ++k) {
    int m = 0;
    const std::vector<double> cost = random_costs(rng, m);
    const auto slot_of = assign_longest_processing_time(cost, m);
    const double got = lpt_makespan(cost, slot_of, m);
    const double opt = testing::optimal_makespan(cost, m);
    const double total = std::accumulate(cost.begin(), cost.end(), 0.0);
    const double lower = std::max(*std::max_element(cost.begin(), cost.end()), total / m);
    ASSERT_LE(got, (4.0 / 3.0 - 1.0 / (3.0 * m)) * opt + kLptEps) << "case " << k;
    ASSERT_GE(got, lower - kLptEps) << "case " << k;
    ASSERT_GE(got, opt - kLptEps) << "case " << k;
    worst_ratio = std::max(worst_ratio, got / opt);
  }
  EXPECT_GT(worst_ratio, 1.0) << "some case should need more than LPT; is the search exhaustive?";
  RecordProperty("worst_lpt_over_optimum", std::to_string(worst_ratio));
}

TEST(LongestProcessingTime, GrahamsTightExampleReachesTheBound) {
  // Graham 1969: 2m + 1 jobs 2m-1, 2m-1, 2m-2, 2m-2, ..., m+1, m+1, m, m, m; LPT = 4m - 1, optimum 3m.
  for (int m = 2; m <= 5; ++m) {
    std::vector<double> cost;
    for (int t = 2 * m - 1; t > m; --t) cost.insert(cost.end(), {double(t), double(t)});
    cost.insert(cost.end(), {double(m), double(m), double(m)});
    const auto slot_of = assign_longest_processing_time(cost, m);
    EXPECT_DOUBLE_EQ(lpt_makespan(cost, slot_of, m), 4.0 * m - 1.0);
    EXPECT_DOUBLE_EQ(testing::optimal_makespan(cost, m), 3.0 * m);
    EXPECT_DOUBLE_EQ((4.0 * m - 1.0) / (3.0 * m), 4.0 / 3.0 - 1.0 / (3.0 * m));
  }
}

TEST(LongestProcessingTime, EqualCountModeGivesEverySlotFloorOrCeilOfTheItems) {
  std::mt19937_64 rng(7);
  for (int k = 0; k < 2000; ++k) {
    const int m = static_cast<int>(rng() % 16) + 1;
    const int n = static_cast<int>(rng() % 200);
    std::vector<double> cost(static_cast<std::size_t>(n));
    for (double& c : cost) c = std::exp(3.0 * std::uniform_real_distribution<double>(0, 1)(rng));  // skewed
    const auto slot_of = assign_longest_processing_time(cost, m, CountMode::equal);
    std::vector<int> count(static_cast<std::size_t>(m), 0);
    for (auto s : slot_of) {
      ASSERT_GE(s, 0);
      ++count[static_cast<std::size_t>(s)];
    }
    const auto [lo, hi] = std::minmax_element(count.begin(), count.end());
    ASSERT_LE(*hi - *lo, 1);
    ASSERT_EQ(*hi, (n + m - 1) / m);
  }
}

TEST(LongestProcessingTime, EqualCountCostsBalanceWhereFreeModeWouldPileSmallItems) {
  // One heavy item and seven light ones on two slots: free mode puts 1 vs 7 items, equal count 4 + 4.
  const std::vector<double> cost = {7, 1, 1, 1, 1, 1, 1, 1};
  const auto free_mode = assign_longest_processing_time(cost, 2);
  EXPECT_DOUBLE_EQ(lpt_makespan(cost, free_mode, 2), 7.0);
  const auto equal = assign_longest_processing_time(cost, 2, CountMode::equal);
  EXPECT_DOUBLE_EQ(lpt_makespan(cost, equal, 2), 10.0);  // 7 + 1 + 1 + 1: the price of equal counts
}

TEST(LongestProcessingTime, TokenCapIsNeverExceededAndLeftOutItemsFitNowhere) {
  std::mt19937_64 rng(99);
  LptScratch scratch;
  for (int k = 0; k < 2000; ++k) {
    const int m = static_cast<int>(rng() % 8) + 1;
    const int n = static_cast<int>(rng() % 60) + 1;
    const std::int64_t cap = static_cast<std::int64_t>(rng() % 1000) + 100;
    std::vector<double> cost(static_cast<std::size_t>(n));
    std::vector<std::int64_t> tokens(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) {
      tokens[static_cast<std::size_t>(i)] = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(cap)) + 1;
      const double t = static_cast<double>(tokens[static_cast<std::size_t>(i)]);
      cost[static_cast<std::size_t>(i)] = t * t;
    }
    std::vector<std::int32_t> slot_of(cost.size());
    const CountMode mode = k % 2 ? CountMode::equal : CountMode::free;
    assign_longest_processing_time(cost, tokens, m, {mode, cap}, slot_of, scratch);
    std::vector<std::int64_t> used(static_cast<std::size_t>(m), 0);
    for (std::size_t i = 0; i < cost.size(); ++i)
      if (slot_of[i] >= 0) used[static_cast<std::size_t>(slot_of[i])] += tokens[i];
    for (auto u : used) ASSERT_LE(u, cap);
    if (mode != CountMode::free) continue;
    for (std::size_t i = 0; i < cost.size(); ++i) {
      if (slot_of[i] != kNotPlaced) continue;
      for (auto u : used) ASSERT_GT(u + tokens[i], cap);
    }
  }
}

TEST(LongestProcessingTime, DeterministicAndOrderedByCost) {
  const std::vector<double> cost = {5, 3, 3, 8, 1, 9, 2, 3};
  EXPECT_EQ(assign_longest_processing_time(cost, 3), assign_longest_processing_time(cost, 3));
  // The three largest go to three distinct slots.
  const auto s = assign_longest_processing_time(cost, 3);
  EXPECT_NE(s[5], s[3]);
  EXPECT_NE(s[5], s[0]);
  EXPECT_NE(s[3], s[0]);
  EXPECT_TRUE(assign_longest_processing_time(std::vector<double>{}, 4).empty());
}

}  // namespace
}  // namespace tessera
