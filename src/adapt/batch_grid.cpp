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
// The smallest ratio an error message names is printed to 6 significant digits: raised by more
// than that rounding, so the ratio it prints passes.
constexpr double kPrintedRatioMargin = 1e-5;

std::int64_t round_to_coarse_multiple(double x) {
  std::int64_t q = 1;
  while (static_cast<double>(q * 2) <= x / kRoundingDivisor) q *= 2;
  return std::llround(x / static_cast<double>(q)) * q;
}
}  // namespace

std::vector<std::int64_t> batch_grid(std::int64_t min_batch, std::int64_t max_batch, double ratio) {
  require_positive("min_batch", min_batch, kMaxGridBatch);
  require_positive("max_batch", max_batch, kMaxGridBatch);
  if (max_batch < min_batch)
    throw Error("max_batch", "got " + std::to_string(max_batch) + " below min_batch " + std::to_string(min_batch),
                "an integer from min_batch to " + std::to_string(kMaxGridBatch));
  if (!std::isfinite(ratio) || ratio <= 1.0) throw Error("ratio", "got " + number_text(ratio), "a number > 1");
  // min, the k = ceil(log(max / min) / log(r)) - 1 geometric points below max, and max; rounding
  // may pull one more below max. Checked before the loop, which this also bounds.
  const double span = std::log(static_cast<double>(max_batch) / static_cast<double>(min_batch));
  if (2.0 + std::ceil(span / std::log(ratio)) > static_cast<double>(kMaxBatchGridPoints))
    throw Error("ratio",
                "got " + number_text(ratio) + ": more than " + std::to_string(kMaxBatchGridPoints) + " grid points from " +
                    std::to_string(min_batch) + " to " + std::to_string(max_batch),
                "a number >= " + number_text(std::exp(span / static_cast<double>(kMaxBatchGridPoints - 2)) * (1.0 + kPrintedRatioMargin)) +
                    " (at most " + std::to_string(kMaxBatchGridPoints) + " points)");
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
