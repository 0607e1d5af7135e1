// Context-parallel sharding: one document filling the sequence is split evenly both ways (the
// head/tail pairing gives each rank the same causal work: chunks r and 2cp-1-r sum to a constant);
// the work adds up to the documents' own (no tile padding when chunks are whole tiles); many short
// documents favour per-sequence chunks (per-document chunks waste tiles); a long document packed
// with short ones favours per-document chunks; the choice is the faster one.
#include "balance/context_parallel_sharding.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include <gtest/gtest.h>

namespace tessera {
namespace {

constexpr double kTol = 1e-9;

SpanCost attention_only() { return {0.0, 1.0, true}; }
SpanCost linear_only() { return {1.0, 0.0, true}; }

TEST(ContextParallelSharding, OneFullDocumentIsEvenEitherWay) {
  const int cp = 4;
  const std::vector<std::int64_t> doc = {2 * cp * kAttentionQueryTileRows * 4};
  for (CpSharding way : {CpSharding::per_sequence, CpSharding::per_document}) {
    const auto t = cp_rank_times(doc, cp, way, attention_only());
    for (double x : t) EXPECT_NEAR(x, t[0], kTol * t[0]) << to_string(way);
    // Causal pairs of the document, d (d + 1) / 2, split over the ranks.
    const double d = static_cast<double>(doc[0]);
    EXPECT_NEAR(std::accumulate(t.begin(), t.end(), 0.0), d * (d + 1) / 2, kTol * d * d);
  }
}

TEST(ContextParallelSharding, TokensAreConservedBothWays) {
  const std::vector<std::int64_t> docs = {1000, 37, 5000, 1, 900};
  const double total = 1000 + 37 + 5000 + 1 + 900;
  for (int cp : {1, 2, 3, 8})
    for (CpSharding way : {CpSharding::per_sequence, CpSharding::per_document}) {
      const auto t = cp_rank_times(docs, cp, way, linear_only());
      EXPECT_NEAR(std::accumulate(t.begin(), t.end(), 0.0), total, kTol * total);
    }
}

TEST(ContextParallelSharding, ShortDocumentsFavourPerSequenceChunks) {
  // 64 documents of 256 tokens with cp = 4: per-sequence chunks hold whole documents; per-document
  // chunks are 32 rows each, a quarter of a tile.
  const std::vector<std::int64_t> docs(64, 256);
  const SpanCost cost{1.0, 0.01, true};
  const CpShardingChoice c = choose_cp_sharding(docs, 4, cost);
  EXPECT_EQ(c.sharding, CpSharding::per_sequence);
  EXPECT_LT(c.per_sequence_s, c.per_document_s);
}

TEST(ContextParallelSharding, ALongDocumentWithShortOnesFavoursPerDocumentChunks) {
  // The long document first: the head/tail split gives rank 0 its cheap head and the short
  // documents, the middle ranks its expensive body.
  std::vector<std::int64_t> docs = {65536};
  docs.insert(docs.end(), 64, 1024);
  const SpanCost cost{1.0, 0.01, true};
  const CpShardingChoice c = choose_cp_sharding(docs, 4, cost);
  EXPECT_EQ(c.sharding, CpSharding::per_document);
  EXPECT_LT(c.per_document_s, c.per_sequence_s);
  const auto per_doc = cp_rank_times(docs, 4, CpSharding::per_document, cost);
  const auto [lo, hi] = std::minmax_element(per_doc.begin(), per_doc.end());
  EXPECT_LT(*hi / *lo, 1.01) << "per-document chunks even the ranks out";
}

TEST(ContextParallelSharding, TheChoiceIsTheFasterSlowestRank) {
  const std::vector<std::int64_t> docs = {3000, 200, 12000, 50, 700};
  const SpanCost cost{0.5, 0.001, true};
  for (int cp : {2, 4, 8}) {
    const CpShardingChoice c = choose_cp_sharding(docs, cp, cost);
    const auto seq = cp_rank_times(docs, cp, CpSharding::per_sequence, cost);
    const auto doc = cp_rank_times(docs, cp, CpSharding::per_document, cost);
    EXPECT_DOUBLE_EQ(c.per_sequence_s, *std::max_element(seq.begin(), seq.end()));
    EXPECT_DOUBLE_EQ(c.per_document_s, *std::max_element(doc.begin(), doc.end()));
    EXPECT_EQ(c.sharding, c.per_document_s < c.per_sequence_s ? CpSharding::per_document : CpSharding::per_sequence);
  }
}

}  // namespace
}  // namespace tessera
