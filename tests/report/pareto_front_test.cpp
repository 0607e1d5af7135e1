#include "report/pareto_front.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "common/thrown_field.h"

namespace tessera::report {
namespace {

using tessera::testing::thrown_field;

std::vector<std::size_t> brute_force_front(const std::vector<Point2>& points) {
  std::vector<std::size_t> front;
  for (std::size_t i = 0; i < points.size(); ++i) {
    bool dominated = false;
    for (std::size_t j = 0; j < points.size() && !dominated; ++j)
      dominated = points[j].x <= points[i].x && points[j].y <= points[i].y &&
                  (points[j].x < points[i].x || points[j].y < points[i].y);
    if (!dominated) front.push_back(i);
  }
  return front;
}

// Small integer grids give many ties and duplicates; log-normal reals give realistic spreads.
std::vector<Point2> random_points(std::mt19937& rng, std::size_t n, bool integer_grid) {
  std::uniform_int_distribution<int> cell(0, 9);
  std::lognormal_distribution<double> spread(0, 2);
  std::vector<Point2> points(n);
  for (Point2& p : points)
    p = integer_grid ? Point2{static_cast<double>(cell(rng)), static_cast<double>(cell(rng))}
                     : Point2{spread(rng), spread(rng)};
  return points;
}

TEST(ParetoFront, EqualsBruteForceOnRandomSets) {
  std::mt19937 rng(2024);
  for (int trial = 0; trial < 200; ++trial) {
    const std::vector<Point2> points = random_points(rng, 1 + trial % 60, trial % 2 == 0);
    std::vector<std::size_t> front = pareto_front(points);
    for (std::size_t k = 1; k < front.size(); ++k) EXPECT_LE(points[front[k - 1]].x, points[front[k]].x);
    std::sort(front.begin(), front.end());
    EXPECT_EQ(front, brute_force_front(points));
  }
  EXPECT_TRUE(pareto_front({}).empty());
}

TEST(ParetoFront, DownsampleKeepsTheFrontAndTheBound) {
  std::mt19937 rng(99);
  for (int trial = 0; trial < 60; ++trial) {
    const std::vector<Point2> points = random_points(rng, 200 + 37 * trial, trial % 3 == 0);
    const std::size_t max_points = 10 + 7 * static_cast<std::size_t>(trial);
    const std::vector<std::size_t> kept = downsample_keeping_front(points, max_points);
    const std::vector<std::size_t> front = brute_force_front(points);
    EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
    EXPECT_EQ(std::adjacent_find(kept.begin(), kept.end()), kept.end());
    for (const std::size_t i : front) EXPECT_TRUE(std::binary_search(kept.begin(), kept.end(), i));
    EXPECT_LE(kept.size(), std::max(max_points, front.size()));
    if (front.size() < max_points) {
      EXPECT_GT(kept.size(), front.size());  // the budget is used
    }
    EXPECT_EQ(kept, downsample_keeping_front(points, max_points));  // deterministic
  }
}

TEST(ParetoFront, DownsampleReturnsTheWholeFrontWhenItIsOverTheBound) {
  std::vector<Point2> points;
  for (int i = 0; i < 50; ++i)
    points.push_back({static_cast<double>(i), static_cast<double>(50 - i)});  // all on the front
  points.push_back({60, 60});
  EXPECT_EQ(downsample_keeping_front(points, 10).size(), 50u);
  EXPECT_EQ(downsample_keeping_front(points, 1000).size(), 51u);  // under the bound: everything
}

TEST(ParetoFront, InvalidInputNamesTheField) {
  const std::vector<Point2> points = {{1, 2}, {3, NAN}};
  EXPECT_EQ(thrown_field([&] { pareto_front(points); }), "points[1].y");
  EXPECT_EQ(thrown_field([] { downsample_keeping_front(std::vector<Point2>{{1, 2}}, 0); }), "max_points");
  EXPECT_EQ(thrown_field([] { pareto_front(std::vector<Point2>{{INFINITY, 2}}); }), "points[0].x");
}

}  // namespace
}  // namespace tessera::report
