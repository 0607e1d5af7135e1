// Stream metrics: the mean over steps of each step's load balance, for the balanced cost, another
// per-sample cost, and a seeded random assignment of the same samples.
#include "balance/stream_metrics.h"

#include <gtest/gtest.h>

#include "balance/cost_blind_assignment.h"

namespace tessera {
namespace {

StreamResult two_steps() {
  StreamResult r;
  r.steps.resize(2);
  r.steps[0].placements = {{0, 0, 0}, {1, 1, 0}};          // loads 4, 2
  r.steps[1].placements = {{2, 0, 1}, {3, 1, 1}, {4, 1, 1}};  // loads 3, 3
  return r;
}

TEST(StreamMetrics, MeanOfEachStepsRatios) {
  const std::vector<double> cost = {4, 2, 3, 1, 2};
  const LoadBalance b = mean_load_balance(two_steps(), cost, 2);
  EXPECT_DOUBLE_EQ(b.imbalance, (4.0 * 2 / 6 + 1.0) / 2);
  EXPECT_DOUBLE_EQ(b.lower_bound, (4.0 * 2 / 6 + 1.0) / 2);  // step 0: the 4 is the largest item
  // Another cost on the same assignment (e.g. one module's share); an all-zero step is skipped.
  const std::vector<double> other = {0, 0, 1, 1, 1};
  EXPECT_DOUBLE_EQ(mean_load_balance(two_steps(), other, 2).imbalance, 2.0 * 2 / 3);
}

TEST(StreamMetrics, RandomBaselineIsTheSameSamplesShuffledPerStep) {
  const std::vector<double> cost = {4, 2, 3, 1, 2};
  const StreamResult r = two_steps();
  const LoadBalance b = mean_random_load_balance(r, cost, 2, 5);
  // Recompute by hand from the documented seeds (seed + step).
  double sum = 0;
  for (std::size_t step = 0; step < 2; ++step) {
    const auto slot_of = assign_at_random(r.steps[step].placements.size(), 2, 5 + step);
    std::vector<double> load(2, 0.0);
    double largest = 0;
    for (std::size_t k = 0; k < slot_of.size(); ++k) {
      const double c = cost[static_cast<std::size_t>(r.steps[step].placements[k].item)];
      load[static_cast<std::size_t>(slot_of[k])] += c;
      largest = std::max(largest, c);
    }
    sum += load_balance(load, largest).imbalance;
  }
  EXPECT_DOUBLE_EQ(b.imbalance, sum / 2);
}

}  // namespace
}  // namespace tessera
