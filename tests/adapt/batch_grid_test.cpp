#include <gtest/gtest.h>

#include <cmath>

#include "adapt/batch_grid.h"
#include "common/thrown_field.h"
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

// The grid is bounded in size and in its largest batch (each point is one planner search whose
// pipeline simulations grow with the batch): the widest default grid fits, anything larger or
// finer is refused before a point is made, naming the argument.
TEST(BatchGrid, SizeAndRangeAreBoundedUpFront) {
  const auto widest = batch_grid(1, kMaxGridBatch);
  EXPECT_EQ(widest.back(), kMaxGridBatch);
  EXPECT_LE(static_cast<std::int64_t>(widest.size()), kMaxBatchGridPoints);
  EXPECT_EQ(testing::thrown_field([] { batch_grid(16, 10'000'000); }), "max_batch");
  EXPECT_EQ(testing::thrown_field([] { batch_grid(16, kMaxGridBatch + 1); }), "max_batch");
  EXPECT_EQ(testing::thrown_field([] { batch_grid(INT64_MAX, INT64_MAX); }), "min_batch");
  // A ratio whose grid would have ~10^11 points: refused at once, not built.
  EXPECT_EQ(testing::thrown_field([] { batch_grid(1, kMaxGridBatch, 1.0 + 1e-10); }), "ratio");
  EXPECT_EQ(testing::thrown_field([] { batch_grid(1, 64, NAN); }), "ratio");
  // The finest ratio the limit allows over the widest range builds at most the limit's points.
  const double finest = std::exp(std::log(static_cast<double>(kMaxGridBatch)) / (kMaxBatchGridPoints - 2)) * 1.0001;
  EXPECT_LE(static_cast<std::int64_t>(batch_grid(1, kMaxGridBatch, finest).size()), kMaxBatchGridPoints);
}

}  // namespace
}  // namespace tessera
