#include "report/pareto_front.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <unordered_set>

#include "core/checks.h"
#include "core/error.h"

namespace tessera::report {

namespace {

constexpr std::size_t kMaxGridCells = 4096;  // per axis: finer is pointless on a screen

void require_finite_points(std::span<const Point2> points) {
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string item = "points[" + std::to_string(i) + "]";
    if (!std::isfinite(points[i].x)) throw Error(item + ".x", "got " + number_text(points[i].x), "a finite number");
    if (!std::isfinite(points[i].y)) throw Error(item + ".y", "got " + number_text(points[i].y), "a finite number");
  }
}

// One axis' values mapped to [0, 1]: through log10 when all are positive (costs span decades).
std::vector<double> unit_coordinates(const std::vector<double>& values) {
  const bool use_log = std::all_of(values.begin(), values.end(), [](double v) { return v > 0; });
  std::vector<double> mapped(values.size());
  std::transform(values.begin(), values.end(), mapped.begin(), [&](double v) { return use_log ? std::log10(v) : v; });
  const auto [lo, hi] = std::minmax_element(mapped.begin(), mapped.end());
  const double lo_value = *lo, span = *hi - *lo;
  for (double& v : mapped) v = span > 0 ? (v - lo_value) / span : 0;
  return mapped;
}

// Lowest index in each occupied cell of a cells x cells grid, ascending.
std::vector<std::size_t> grid_representatives(const std::vector<std::size_t>& indices, const std::vector<double>& u,
                                              const std::vector<double>& v, std::size_t cells) {
  std::unordered_set<std::size_t> seen;
  std::vector<std::size_t> kept;
  const auto bin = [&](double t) {
    return std::min(cells - 1, static_cast<std::size_t>(t * static_cast<double>(cells)));
  };
  for (std::size_t k = 0; k < indices.size(); ++k)
    if (seen.insert(bin(u[k]) * cells + bin(v[k])).second) kept.push_back(indices[k]);
  return kept;
}

}  // namespace

std::vector<std::size_t> pareto_front(std::span<const Point2> points) {
  require_finite_points(points);
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (points[a].x != points[b].x) return points[a].x < points[b].x;
    if (points[a].y != points[b].y) return points[a].y < points[b].y;
    return a < b;
  });
  std::vector<std::size_t> front;
  double best_y_left = std::numeric_limits<double>::infinity();  // min y over strictly smaller x
  for (std::size_t start = 0; start < order.size();) {
    std::size_t end = start;
    while (end < order.size() && points[order[end]].x == points[order[start]].x) ++end;
    const double group_min_y = points[order[start]].y;  // sorted by y within equal x
    if (group_min_y < best_y_left)
      for (std::size_t k = start; k < end && points[order[k]].y == group_min_y; ++k) front.push_back(order[k]);
    best_y_left = std::min(best_y_left, group_min_y);
    start = end;
  }
  return front;
}

std::vector<std::size_t> downsample_keeping_front(std::span<const Point2> points, std::size_t max_points) {
  if (max_points == 0) throw Error("max_points", "got 0", "an integer of at least 1");
  std::vector<std::size_t> kept = pareto_front(points);
  if (points.size() <= max_points) {
    kept.resize(points.size());
    std::iota(kept.begin(), kept.end(), 0);
    return kept;
  }
  if (kept.size() >= max_points) {
    std::sort(kept.begin(), kept.end());
    return kept;
  }
  std::vector<bool> on_front(points.size(), false);
  for (const std::size_t i : kept) on_front[i] = true;
  std::vector<std::size_t> others;
  std::vector<double> xs, ys;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (on_front[i]) continue;
    others.push_back(i);
    xs.push_back(points[i].x);
    ys.push_back(points[i].y);
  }
  const std::vector<double> u = unit_coordinates(xs), v = unit_coordinates(ys);
  const std::size_t budget = max_points - kept.size();
  // floor(sqrt(budget))^2 cells always fit; try doubling the resolution while the budget allows.
  std::size_t cells = static_cast<std::size_t>(std::sqrt(static_cast<double>(budget)));
  while (cells * cells > budget) --cells;
  std::vector<std::size_t> chosen = grid_representatives(others, u, v, cells);
  for (std::size_t finer = cells * 2; finer <= kMaxGridCells; finer *= 2) {
    std::vector<std::size_t> candidate = grid_representatives(others, u, v, finer);
    if (candidate.size() > budget) break;
    chosen = std::move(candidate);
  }
  kept.insert(kept.end(), chosen.begin(), chosen.end());
  std::sort(kept.begin(), kept.end());
  return kept;
}

}  // namespace tessera::report
