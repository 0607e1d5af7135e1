#include "adapt/batch_grid.h"

#include <cmath>
#include <string>

#include "core/checks.h"
#include "core/error.h"

namespace tessera {

namespace {
// A grid point is rounded to a multiple of the largest power of two <= point / 4: 2 to 3
// significant bits, so points stay within 12.5% of the geometric sequence.
constexpr double kRoundingDivisor = 4.0;

std::int64_t round_to_coarse_multiple(double x) {
  std::int64_t q = 1;
  while (static_cast<double>(q * 2) <= x / kRoundingDivisor) q *= 2;
  return std::llround(x / static_cast<double>(q)) * q;
}
}  // namespace

std::vector<std::int64_t> batch_grid(std::int64_t min_batch, std::int64_t max_batch, double ratio) {
  require_positive("min_batch", min_batch);
  require_positive("max_batch", max_batch);
  if (max_batch < min_batch)
    throw Error("max_batch", "got " + std::to_string(max_batch) + " below min_batch " + std::to_string(min_batch),
                "an integer >= min_batch");
  if (!std::isfinite(ratio) || ratio <= 1.0) throw Error("ratio", "got " + std::to_string(ratio), "a number > 1");
  std::vector<std::int64_t> grid{min_batch};
  for (double x = static_cast<double>(min_batch) * ratio;; x *= ratio) {
    const std::int64_t point = round_to_coarse_multiple(x);
    if (point >= max_batch) break;
    if (point > grid.back()) grid.push_back(point);
  }
  if (grid.back() != max_batch) grid.push_back(max_batch);
  return grid;
}

}  // namespace tessera
