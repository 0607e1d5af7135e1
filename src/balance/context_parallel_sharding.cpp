#include "balance/context_parallel_sharding.h"

#include <algorithm>

namespace tessera {

namespace {

// Time of query rows [begin, end) of a document of `length` tokens.
double segment_time_s(std::int64_t begin, std::int64_t end, std::int64_t length, const SpanCost& cost) {
  if (end <= begin) return 0.0;
  const double rows = static_cast<double>(end - begin);
  const std::int64_t tiles = (end - begin + kAttentionQueryTileRows - 1) / kAttentionQueryTileRows;
  const double padding_rows = static_cast<double>(tiles * kAttentionQueryTileRows - (end - begin));
  const double b = static_cast<double>(begin), e = static_cast<double>(end);
  // Causal: query at position q sees q + 1 keys; a padded row is charged the segment's last key span.
  const double pairs = cost.causal ? (e * (e + 1.0) - b * (b + 1.0)) / 2.0 + padding_rows * e
                                   : (rows + padding_rows) * static_cast<double>(length);
  // The document's keys per query tile set the kernel's efficiency (SpanCost::attention_half_seq).
  const double span_factor = 1.0 + cost.attention_half_seq / static_cast<double>(std::max<std::int64_t>(1, length));
  return cost.linear_s_per_token * rows + cost.attention_s_per_pair * pairs * span_factor;
}

// Chunk j of 2 cp over n tokens: [j n / 2cp, (j + 1) n / 2cp).
std::int64_t chunk_start(std::int64_t n, std::int64_t j, std::int64_t chunks) { return n * j / chunks; }

}  // namespace

const char* to_string(CpSharding sharding) {
  return sharding == CpSharding::per_sequence ? "per-sequence" : "per-document";
}

std::vector<double> cp_rank_times(std::span<const std::int64_t> documents, int cp, CpSharding sharding,
                                  const SpanCost& cost) {
  std::vector<double> rank_s(static_cast<std::size_t>(cp), 0.0);
  cp_rank_times_into(documents, sharding, cost, rank_s);
  return rank_s;
}

void cp_rank_times_into(std::span<const std::int64_t> documents, CpSharding sharding, const SpanCost& cost,
                        std::span<double> rank_s) {
  std::fill(rank_s.begin(), rank_s.end(), 0.0);
  const auto cp = static_cast<std::int64_t>(rank_s.size());
  const std::int64_t chunks = 2LL * cp;
  auto rank_of_chunk = [&](std::int64_t j) { return static_cast<std::size_t>(j < cp ? j : chunks - 1 - j); };
  if (sharding == CpSharding::per_document) {
    for (std::int64_t d : documents)
      for (std::int64_t j = 0; j < chunks; ++j)
        rank_s[rank_of_chunk(j)] += segment_time_s(chunk_start(d, j, chunks), chunk_start(d, j + 1, chunks), d, cost);
    return;
  }
  std::int64_t total = 0;
  for (std::int64_t d : documents) total += d;
  // Walk the chunks and the documents together; each overlap is one query segment.
  std::size_t doc = 0;
  std::int64_t doc_start = 0;
  for (std::int64_t j = 0; j < chunks; ++j) {
    const std::int64_t begin = chunk_start(total, j, chunks), end = chunk_start(total, j + 1, chunks);
    while (doc < documents.size() && doc_start + documents[doc] <= begin) doc_start += documents[doc++];
    std::size_t k = doc;
    std::int64_t k_start = doc_start;
    while (k < documents.size() && k_start < end) {
      const std::int64_t lo = std::max(begin, k_start) - k_start;
      const std::int64_t hi = std::min(end, k_start + documents[k]) - k_start;
      rank_s[rank_of_chunk(j)] += segment_time_s(lo, hi, documents[k], cost);
      k_start += documents[k++];
    }
  }
}

CpShardingChoice choose_cp_sharding(std::span<const std::int64_t> documents, int cp, const SpanCost& cost) {
  CpShardingChoice choice;
  const auto slowest = [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); };
  choice.per_sequence_s = slowest(cp_rank_times(documents, cp, CpSharding::per_sequence, cost));
  choice.per_document_s = slowest(cp_rank_times(documents, cp, CpSharding::per_document, cost));
  choice.sharding = choice.per_document_s < choice.per_sequence_s ? CpSharding::per_document : CpSharding::per_sequence;
  return choice;
}

}  // namespace tessera
