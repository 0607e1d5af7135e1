// 1F1B micro-batch order: with equal micro-batches the makespan is the closed form
// (m + p - 1)(f + b) (Narayanan et al. 2021, PipeDream-flush); the chosen order is a permutation,
// never slower than the given, increasing or decreasing orders (all simulated), and on skewed
// steps it recovers part of the bubble a bad arrival order costs.
#include "balance/microbatch_order.h"

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"

namespace tessera {
namespace {

TEST(MicrobatchOrder, EqualMicrobatchesGiveTheClosedForm) {
  PipelineSimulator sim;
  const int p = 4, m = 8;
  const std::vector<double> time(m, 12.0);  // per stage: f = 1, b = 2
  const MicrobatchOrder o = order_microbatches(time, p, sim);
  EXPECT_DOUBLE_EQ(o.given_makespan_s, (m + p - 1) * 3.0);
  EXPECT_DOUBLE_EQ(o.makespan_s, (m + p - 1) * 3.0);
}

TEST(MicrobatchOrder, NeverSlowerThanTheSimpleOrdersOnRandomSteps) {
  std::mt19937_64 rng(8);
  PipelineSimulator sim;
  int improved = 0;
  for (int k = 0; k < 300; ++k) {
    const int p = static_cast<int>(rng() % 8) + 1;
    const int m = static_cast<int>(rng() % 24) + 1;
    std::vector<double> time(static_cast<std::size_t>(m));
    for (double& t : time) t = std::exp(2.0 * std::uniform_real_distribution<double>(0, 1)(rng));
    const MicrobatchOrder o = order_microbatches(time, p, sim);
    std::vector<std::int32_t> sorted = o.order;
    std::sort(sorted.begin(), sorted.end());
    std::vector<std::int32_t> identity(static_cast<std::size_t>(m));
    std::iota(identity.begin(), identity.end(), 0);
    ASSERT_EQ(sorted, identity);
    ASSERT_DOUBLE_EQ(o.makespan_s, pipeline_makespan_s(time, o.order, p, sim));
    ASSERT_LE(o.makespan_s, o.given_makespan_s);
    std::vector<std::int32_t> rising = identity;
    std::sort(rising.begin(), rising.end(), [&](int a, int b) { return time[a] < time[b]; });
    ASSERT_LE(o.makespan_s, pipeline_makespan_s(time, rising, p, sim) + 1e-12);
    std::reverse(rising.begin(), rising.end());
    ASSERT_LE(o.makespan_s, pipeline_makespan_s(time, rising, p, sim) + 1e-12);
    // Lower bound: the first stage runs every micro-batch's share.
    const double total = std::accumulate(time.begin(), time.end(), 0.0);
    ASSERT_GE(o.makespan_s, total / p - 1e-9);
    improved += o.makespan_s < o.given_makespan_s - 1e-9;
  }
  EXPECT_GT(improved, 100);
}

TEST(MicrobatchOrder, ASlowMicrobatchFirstIsMovedOutOfTheWarmUp) {
  PipelineSimulator sim;
  std::vector<double> time(8, 3.0);
  time[0] = 30.0;  // arrives first: every stage's warm-up waits for it
  const MicrobatchOrder o = order_microbatches(time, 4, sim);
  EXPECT_NE(o.order.front(), 0);
  EXPECT_LT(o.makespan_s, o.given_makespan_s);
}

TEST(MicrobatchOrder, ShapesTheSimulatorRefusesAreErrors) {
  PipelineSimulator sim;
  EXPECT_THROW(order_microbatches(std::vector<double>{}, 4, sim), Error);
  EXPECT_THROW(order_microbatches(std::vector<double>{1.0}, 0, sim), Error);
}

}  // namespace
}  // namespace tessera
