// Largest differencing: the textbook two-way example (8, 7, 6, 5, 4 -> difference 2), no worse
// than longest processing time on average over 10,000 random small cases (both against the exact
// optimum), never below the lower bound, every item in a valid slot, and refused when too large.
#include "balance/largest_differencing.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "balance/load_balance.h"
#include "balance/longest_processing_time.h"
#include "core/error.h"
#include "optimal_makespan.h"

namespace tessera {
namespace {

constexpr int kCases = 10'000;
constexpr double kEps = 1e-9;

double makespan(const std::vector<double>& cost, const std::vector<std::int32_t>& slot_of, int slots) {
  const auto load = slot_loads(cost, slot_of, slots);
  return *std::max_element(load.begin(), load.end());
}

TEST(LargestDifferencing, TwoWayTextbookExample) {
  // Karmarkar-Karp on {8, 7, 6, 5, 4}: 8-7 -> 1, 6-5 -> 1, 4-1 -> 3, 3-1 -> 2: sums 16 and 14
  // (the optimum is 15 / 15); longest processing time ends at 17 / 13.
  const std::vector<double> cost = {8, 7, 6, 5, 4};
  const auto slot_of = assign_largest_differencing(cost, 2);
  const auto load = slot_loads(cost, slot_of, 2);
  EXPECT_DOUBLE_EQ(std::fabs(load[0] - load[1]), 2.0);
  const auto lpt = slot_loads(cost, assign_longest_processing_time(cost, 2), 2);
  EXPECT_DOUBLE_EQ(std::fabs(lpt[0] - lpt[1]), 4.0);
}

TEST(LargestDifferencing, NoWorseThanLongestProcessingTimeOnAverage) {
  std::mt19937_64 rng(31);
  double kk_sum = 0, lpt_sum = 0;
  int kk_better = 0, lpt_better = 0;
  for (int k = 0; k < kCases; ++k) {
    const int m = static_cast<int>(rng() % 4) + 1;
    const int n = static_cast<int>(rng() % 10) + 1;
    std::vector<double> cost(static_cast<std::size_t>(n));
    for (double& c : cost) c = std::uniform_real_distribution<double>(0.01, 1.0)(rng);
    const double opt = testing::optimal_makespan(cost, m);
    const double kk = makespan(cost, assign_largest_differencing(cost, m), m);
    const double lpt = makespan(cost, assign_longest_processing_time(cost, m), m);
    const double total = std::accumulate(cost.begin(), cost.end(), 0.0);
    ASSERT_GE(kk, std::max(*std::max_element(cost.begin(), cost.end()), total / m) - kEps);
    ASSERT_GE(kk, opt - kEps);
    kk_sum += kk / opt;
    lpt_sum += lpt / opt;
    kk_better += kk < lpt - kEps;
    lpt_better += lpt < kk - kEps;
  }
  EXPECT_LE(kk_sum, lpt_sum);
  RecordProperty("kk_strictly_better_cases", std::to_string(kk_better));
  RecordProperty("lpt_strictly_better_cases", std::to_string(lpt_better));
  RecordProperty("mean_kk_over_optimum", std::to_string(kk_sum / kCases));
  RecordProperty("mean_lpt_over_optimum", std::to_string(lpt_sum / kCases));
}

TEST(LargestDifferencing, EveryItemLandsInAValidSlotAndLoadsAreConserved) {
  std::mt19937_64 rng(5);
  for (int k = 0; k < 500; ++k) {
    const int m = static_cast<int>(rng() % 64) + 1;
    const int n = static_cast<int>(rng() % 300);
    std::vector<double> cost(static_cast<std::size_t>(n));
    for (double& c : cost) c = std::uniform_real_distribution<double>(0.0, 5.0)(rng);
    const auto slot_of = assign_largest_differencing(cost, m);
    ASSERT_EQ(slot_of.size(), cost.size());
    for (auto s : slot_of) ASSERT_TRUE(s >= 0 && s < m);
    const auto load = slot_loads(cost, slot_of, m);
    EXPECT_NEAR(std::accumulate(load.begin(), load.end(), 0.0), std::accumulate(cost.begin(), cost.end(), 0.0), 1e-9);
    EXPECT_EQ(slot_of, assign_largest_differencing(cost, m));
  }
}

TEST(LargestDifferencing, RefusesMoreSubsetSumsThanItsLimit) {
  const std::vector<double> cost(static_cast<std::size_t>(kMaxDifferencingEntries / 1024 + 1), 1.0);
  try {
    assign_largest_differencing(cost, 1024);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "method");
    EXPECT_NE(e.allowed().find("lpt"), std::string::npos);
  }
}

}  // namespace
// Balanced differencing: 1..2m in two runs of m pairs each slot's item of one run with the
// complementary item of the other (largest with smallest), so every slot sums to 2m + 1 and holds
// two items; on random inputs every slot count is within one of n / m.
TEST(LargestDifferencing, EqualCountPairsRunsAndKeepsCountsWithinOne) {
  for (int m : {2, 3, 8}) {
    std::vector<double> cost;
    for (int v = 1; v <= 2 * m; ++v) cost.push_back(v);
    const auto slot_of = assign_largest_differencing(cost, m, true);
    const auto load = slot_loads(cost, slot_of, m);
    for (double l : load) EXPECT_DOUBLE_EQ(l, 2.0 * m + 1.0) << "m=" << m;
  }
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> draw(1.0, 100.0);
  for (int c = 0; c < 200; ++c) {
    const int m = 2 + c % 7;
    const std::size_t n = 1 + static_cast<std::size_t>(c) % 40;
    std::vector<double> cost(n);
    for (double& x : cost) x = draw(rng);
    const auto slot_of = assign_largest_differencing(cost, m, true);
    std::vector<std::size_t> count(static_cast<std::size_t>(m), 0);
    for (std::int32_t s : slot_of) ++count[static_cast<std::size_t>(s)];
    const auto [lo, hi] = std::minmax_element(count.begin(), count.end());
    EXPECT_LE(*hi - *lo, 1u) << "n=" << n << " m=" << m;
  }
}

}  // namespace tessera
