// Context-parallel sharding of one packed sequence (documents back to back, each its own causal
// span) over cp ranks, two ways:
//   per sequence  the sequence cut into 2 cp equal chunks, rank r taking chunks r and 2cp - 1 - r
//                 (the load-balanced causal split of Megatron-Core / Transformer Engine): even for
//                 one document filling the sequence, uneven when documents of different lengths
//                 are packed, since work follows each document's own causal triangle
//   per document  every document cut into 2 cp chunks, rank r taking chunks r and 2cp - 1 - r of
//                 each (WLB-LLM, OSDI'25, §5's per-document sharding, padding-free): even work, but
//                 short documents leave small chunks that waste the attention kernel's tiles
// The prediction per rank: GEMM time for its tokens plus attention time for its query-key pairs,
// each query segment's rows rounded up to whole tiles of kAttentionQueryTileRows. The choice is the
// way with the faster slowest rank (WLB-LLM §5.2's adaptive selection).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "balance/sample_cost.h"
#include "cost/compute_cost.h"  // kAttentionQueryTileRows

namespace tessera {

enum class CpSharding { per_sequence, per_document };
const char* to_string(CpSharding sharding);


struct CpShardingChoice {
  CpSharding sharding = CpSharding::per_sequence;
  double per_sequence_s = 0;  // slowest rank
  double per_document_s = 0;
};

// Predicted time of each of the cp ranks. Preconditions: cp >= 1, documents >= 0.
std::vector<double> cp_rank_times(std::span<const std::int64_t> documents, int cp, CpSharding sharding,
                                  const SpanCost& cost);
// The same into `rank_s` (cp = rank_s.size() entries, overwritten), allocating nothing: for loops
// that cost many micro-batches at many degrees (balance/per_batch_parallelism.h).
void cp_rank_times_into(std::span<const std::int64_t> documents, CpSharding sharding, const SpanCost& cost,
                        std::span<double> rank_s);
CpShardingChoice choose_cp_sharding(std::span<const std::int64_t> documents, int cp, const SpanCost& cost);

}  // namespace tessera
