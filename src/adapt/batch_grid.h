// Candidate global batch sizes: a geometric grid within the user's bounds.
#pragma once

#include <cstdint>
#include <vector>

namespace tessera {

// Ratio between neighbouring grid points: sqrt(2), fine enough that the best batch on the grid
// is within a few percent of goodput of the best batch overall (goodput is flat near its peak).
inline constexpr double kBatchGridRatio = 1.4142135623730951;
// Largest global batch a grid (and a scenario) may reach, in sequences: 2^13, at 4,096-token
// sequences 2^25 tokens, twice the largest published pre-training batch (Llama 3 405B's 16M
// tokens, arXiv 2407.21783, section 3.4.1). Every grid batch costs a planner search and an
// estimate of every plan, whose pipeline simulations grow with the micro-batch count (up to one per
// sequence): measured, qwen2.5-32b on 32 H100 over batches 1 to 8,192 takes 6 s, to 65,536 29 s.
inline constexpr std::int64_t kMaxGridBatch = 8192;
// Most points a grid may have (each is one planner search): sqrt(2) steps from 1 to kMaxGridBatch
// are 27 points, so the default ratio never reaches it; a finer ratio must keep within it.
inline constexpr std::int64_t kMaxBatchGridPoints = 64;

// min_batch, min_batch * r, min_batch * r^2, ... up to max_batch (both included), each point after
// the first rounded to a multiple of the largest power of two not above a quarter of it, so that
// from a power-of-two start every point is 2^k or 3 * 2^k sequences (divisible by the data-parallel
// sizes and micro-batches plans use). Throws Error unless 1 <= min_batch <= max_batch <=
// kMaxGridBatch, r > 1 and the grid has at most kMaxBatchGridPoints points (checked before any is
// made: Error("ratio", ...) naming the smallest ratio that fits).
std::vector<std::int64_t> batch_grid(std::int64_t min_batch, std::int64_t max_batch,
                                     double ratio = kBatchGridRatio);

}  // namespace tessera
