#include <gtest/gtest.h>

#include <cmath>

#include "adapt/batch_grid.h"
#include "core/error.h"

namespace tessera {
namespace {

// From a power of two every point is 2^k or 3 * 2^k, increasing, within 12.5% of the geometric
// sequence, from min to max.
TEST(BatchGrid, GeometricPointsThatDivideWell) {
  const auto grid = batch_grid(16, 4096);
  ASSERT_EQ(grid.front(), 16);
  ASSERT_EQ(grid.back(), 4096);
  EXPECT_EQ(grid.size(), 17u);
  for (std::size_t i = 0; i < grid.size(); ++i) {
    std::int64_t v = grid[i];
    while (v % 2 == 0) v /= 2;
    EXPECT_TRUE(v == 1 || v == 3) << grid[i];
    const double geometric = 16.0 * std::pow(kBatchGridRatio, static_cast<double>(i));
    EXPECT_NEAR(static_cast<double>(grid[i]) / geometric, 1.0, 0.125) << grid[i];
    if (i > 0) {
      EXPECT_GT(grid[i], grid[i - 1]);
    }
  }
}

TEST(BatchGrid, BoundsAreKeptAndChecked) {
  EXPECT_EQ(batch_grid(100, 100), std::vector<std::int64_t>{100});
  const auto odd = batch_grid(5, 50);
  EXPECT_EQ(odd.front(), 5);
  EXPECT_EQ(odd.back(), 50);
  EXPECT_THROW(batch_grid(0, 10), Error);
  EXPECT_THROW(batch_grid(20, 10), Error);
  EXPECT_THROW(batch_grid(1, 10, 1.0), Error);
}

}  // namespace
}  // namespace tessera
