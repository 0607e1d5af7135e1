// Context-parallel shards of a packed micro-batch (dataservice/context_parallel_shard.h): the
// ranks' ranges partition the sequence exactly, in both ways, and match the chunks written out by
// hand for a small case.
#include "dataservice/context_parallel_shard.h"

#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "core/seeded_random.h"

namespace tessera {
namespace {

using Ranges = std::vector<std::pair<std::int64_t, std::int64_t>>;

TEST(ContextParallelShard, ChunksByHand) {
  const std::vector<std::int64_t> docs{10, 6};
  // Per sequence: 16 tokens in 4 chunks of 4; rank 0 takes chunks 0 and 3, rank 1 chunks 1 and 2.
  EXPECT_EQ(cp_shard_ranges(docs, 2, 0, CpSharding::per_sequence), (Ranges{{0, 4}, {12, 16}}));
  EXPECT_EQ(cp_shard_ranges(docs, 2, 1, CpSharding::per_sequence), (Ranges{{4, 8}, {8, 12}}));
  // Per document: 10 tokens cut at 0, 2, 5, 7, 10; 6 tokens (from 10) at 10, 11, 13, 14, 16.
  EXPECT_EQ(cp_shard_ranges(docs, 2, 0, CpSharding::per_document), (Ranges{{0, 2}, {7, 10}, {10, 11}, {14, 16}}));
  EXPECT_EQ(cp_shard_ranges(docs, 2, 1, CpSharding::per_document), (Ranges{{2, 5}, {5, 7}, {11, 13}, {13, 14}}));
}

TEST(ContextParallelShard, TheRanksPartitionTheSequence) {
  SeededRandom rng(5);
  for (int trial = 0; trial < 200; ++trial) {
    std::vector<std::int64_t> docs(1 + rng.below(6));
    std::int64_t total = 0;
    for (auto& d : docs) total += d = static_cast<std::int64_t>(rng.below(3000));
    const int cp = 1 + static_cast<int>(rng.below(8));
    for (CpSharding way : {CpSharding::per_sequence, CpSharding::per_document}) {
      std::vector<int> covered(static_cast<std::size_t>(total), 0);
      for (int r = 0; r < cp; ++r)
        for (const auto& [begin, end] : cp_shard_ranges(docs, cp, r, way)) {
          ASSERT_LT(begin, end);
          for (std::int64_t t = begin; t < end; ++t) ++covered[static_cast<std::size_t>(t)];
        }
      EXPECT_TRUE(std::all_of(covered.begin(), covered.end(), [](int c) { return c == 1; })) << trial;
    }
  }
}

}  // namespace
}  // namespace tessera
