#include "dataservice/context_parallel_shard.h"

namespace tessera {

namespace {

// Chunks r and 2cp - 1 - r of a span of n tokens starting at `offset`, appended when non-empty.
void append_chunks(std::vector<std::pair<std::int64_t, std::int64_t>>& out, std::int64_t offset, std::int64_t n, int cp,
                   int r) {
  const std::int64_t chunks = 2 * static_cast<std::int64_t>(cp);
  for (std::int64_t j : {static_cast<std::int64_t>(r), chunks - 1 - r}) {
    const std::int64_t begin = offset + n * j / chunks, end = offset + n * (j + 1) / chunks;
    if (end > begin) out.emplace_back(begin, end);
  }
}

}  // namespace

std::vector<std::pair<std::int64_t, std::int64_t>> cp_shard_ranges(std::span<const std::int64_t> sample_tokens, int cp,
                                                                   int cp_rank, CpSharding sharding) {
  std::vector<std::pair<std::int64_t, std::int64_t>> out;
  std::int64_t offset = 0, total = 0;
  for (std::int64_t n : sample_tokens) total += n;
  if (sharding == CpSharding::per_sequence) {
    append_chunks(out, 0, total, cp, cp_rank);
    return out;
  }
  for (std::int64_t n : sample_tokens) {
    append_chunks(out, offset, n, cp, cp_rank);
    offset += n;
  }
  return out;
}

}  // namespace tessera
