// The exact 2-D Pareto front of points to minimise in both coordinates (e.g. step time against
// memory), and downsampling for charts that keeps every front point.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace tessera::report {

struct Point2 {
  double x = 0;
  double y = 0;
};

// Indices of the points no other point dominates (another is <= in both coordinates and < in
// one), in increasing x. Equal points do not dominate each other: all copies are on the front.
// O(n log n). Throws tessera::Error ("points[i].x" / "points[i].y") for a non-finite coordinate.
std::vector<std::size_t> pareto_front(std::span<const Point2> points);

// Indices (ascending) of at most `max_points` points to draw: every front point, plus the others
// thinned to one per cell of a grid over the data (log10 bins on an axis whose values are all > 0,
// linear bins otherwise), the finest grid that fits the budget; the lowest index represents its
// cell, so the result is deterministic. When the front alone exceeds `max_points` it is returned
// whole. Throws tessera::Error ("max_points") for 0.
std::vector<std::size_t> downsample_keeping_front(std::span<const Point2> points, std::size_t max_points);

}  // namespace tessera::report
