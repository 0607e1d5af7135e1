#include <gtest/gtest.h>

#include <cmath>

#include "common/thrown_field.h"
#include "reliability/restart_time.h"

namespace tessera {
namespace {

// Poisson tail: no spares, a node-losing failure always waits; P(N >= 1) = 1 - e^{-mean};
// P(N >= 2) = 1 - e^{-mean}(1 + mean); more spares, less waiting.
TEST(RestartTime, NoSpareProbabilityIsThePoissonTail) {
  EXPECT_DOUBLE_EQ(no_spare_probability(3.0, 0), 1.0);
  EXPECT_NEAR(no_spare_probability(3.0, 1), 1 - std::exp(-3.0), 1e-15);
  EXPECT_NEAR(no_spare_probability(3.0, 2), 1 - std::exp(-3.0) * 4.0, 1e-15);
  double previous = 1.0;
  for (std::int64_t spares = 1; spares < 12; ++spares) {
    const double p = no_spare_probability(3.0, spares);
    EXPECT_LT(p, previous);
    previous = p;
  }
  EXPECT_LT(no_spare_probability(3.0, 16), 1e-5);
}

// Restart = detection + relaunch + node-losing share x P(no spare) x replacement wait.
TEST(RestartTime, ExpectedRestartAddsTheReplacementWaitOnlyWithoutSpares) {
  RestartSpec r;
  r.replacement_wait_s = 3600;
  const double failures = 0.3, node_losses = 0.18;
  EXPECT_NEAR(expected_restart_s(r, failures, node_losses), 600 + 300 + 0.6 * 3600, 1e-9);
  r.spare_nodes = 20;  // mean in repair 0.18 x 24 = 4.3 nodes: 20 spares nearly never run out
  EXPECT_NEAR(expected_restart_s(r, failures, node_losses), 900, 1e-3);
  r.replacement_wait_s = 0;
  r.spare_nodes = 0;
  EXPECT_DOUBLE_EQ(expected_restart_s(r, failures, node_losses), 900);
}

TEST(RestartTime, BadValuesNameTheField) {
  RestartSpec r;
  r.relaunch_s = -5;
  EXPECT_EQ(testing::thrown_field([&] { r.validate(); }), "restart.relaunch_s");
  r = RestartSpec{};
  r.node_repair_h = 0;
  EXPECT_EQ(testing::thrown_field([&] { r.validate(); }), "restart.node_repair_h");
  r = RestartSpec{};
  r.spare_nodes = -1;
  EXPECT_EQ(testing::thrown_field([&] { r.validate(); }), "restart.spare_nodes");
}

}  // namespace
}  // namespace tessera
