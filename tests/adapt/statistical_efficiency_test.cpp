// E(B) and goodput against McCandlish et al.'s steps / examples trade-off they come from.
#include <gtest/gtest.h>

#include <cmath>

#include "adapt/statistical_efficiency.h"
#include "core/error.h"

namespace tessera {
namespace {

// With S = S_min (1 + B_noise / B) steps to a target, E(B) * B / B0 steps at B0 equal one step at B:
// a run at B needs exactly E(B0)/E(B) = (B_noise + B) / (B_noise + B0) times B0's examples.
TEST(StatisticalEfficiency, MatchesTheStepsExamplesTradeOff) {
  const double noise = 300.0, b0 = 64.0;
  auto steps = [&](double b) { return 1.0 + noise / b; };  // in units of S_min
  for (double b : {16.0, 64.0, 100.0, 1024.0, 8192.0}) {
    const double examples_ratio = steps(b) * b / (steps(b0) * b0);
    EXPECT_NEAR(statistical_efficiency(b, noise, b0), 1.0 / examples_ratio, 1e-12) << b;
  }
  EXPECT_DOUBLE_EQ(statistical_efficiency(b0, noise, b0), 1.0);
  EXPECT_GT(statistical_efficiency(16.0, noise, b0), 1.0);
  // Falls with the batch, rises with the noise scale; far below B_noise a bigger batch costs little.
  EXPECT_LT(statistical_efficiency(2048.0, noise, b0), statistical_efficiency(1024.0, noise, b0));
  EXPECT_GT(statistical_efficiency(1024.0, 4.0 * noise, b0), statistical_efficiency(1024.0, noise, b0));
  EXPECT_GT(statistical_efficiency(2.0 * b0, 1e6, b0), 0.999);
}

TEST(StatisticalEfficiency, GoodputIsThroughputTimesEfficiency) {
  EXPECT_DOUBLE_EQ(goodput(1000.0, 128.0, 128.0, 64.0), 1000.0 * 192.0 / 256.0);
  // Doubling the batch pays only when throughput grows faster than efficiency falls.
  const double noise = 100.0, b0 = 32.0;
  EXPECT_GT(goodput(1.5, 64.0, noise, b0), goodput(1.0, 32.0, noise, b0));
  EXPECT_LT(goodput(1.1, 64.0, noise, b0), goodput(1.0, 32.0, noise, b0));
}

TEST(StatisticalEfficiency, RejectsInvalidInput) {
  EXPECT_THROW(statistical_efficiency(0.0, 1.0, 1.0), Error);
  EXPECT_THROW(statistical_efficiency(1.0, -1.0, 1.0), Error);
  EXPECT_THROW(statistical_efficiency(1.0, 1.0, NAN), Error);
  EXPECT_THROW(goodput(-1.0, 1.0, 1.0, 1.0), Error);
}

}  // namespace
}  // namespace tessera
