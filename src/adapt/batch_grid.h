// Candidate global batch sizes: a geometric grid within the user's bounds.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera {

// Ratio between neighbouring grid points: sqrt(2), fine enough that the best batch on the grid
// is within a few percent of goodput of the best batch overall (goodput is flat near its peak).
inline constexpr double kBatchGridRatio = 1.4142135623730951;

// min_batch, min_batch * r, min_batch * r^2, ... up to max_batch (both included), each point after
// the first rounded to a multiple of the largest power of two not above a quarter of it, so that
// from a power-of-two start every point is 2^k or 3 * 2^k sequences (divisible by the data-parallel
// sizes and micro-batches plans use). Throws Error unless 1 <= min_batch <= max_batch and r > 1.
std::vector<std::int64_t> batch_grid(std::int64_t min_batch, std::int64_t max_batch,
                                     double ratio = kBatchGridRatio);

}  // namespace tessera
