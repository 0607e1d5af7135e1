// Which tokens of a micro-batch's packed sequence each context-parallel rank processes (issue 35:
// the data service's CP sharding). The packed sequence is the micro-batch's samples in order, each
// sample's image tokens then its text tokens (its backbone tokens, SampleTokens::backbone_tokens).
// The split is the balancer's choice for that micro-batch (balance/context_parallel_sharding.h):
//   per-sequence  the sequence cut into 2 cp chunks, rank r taking chunks r and 2 cp - 1 - r;
//   per-document  every sample cut so, rank r taking its chunks r and 2 cp - 1 - r of each;
// chunk j of n tokens is [j n / 2cp, (j + 1) n / 2cp). The ranks' ranges partition the sequence.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "balance/context_parallel_sharding.h"

namespace tessera {

// [begin, end) ranges of the packed sequence for `cp_rank` of `cp`, in increasing order.
std::vector<std::pair<std::int64_t, std::int64_t>> cp_shard_ranges(std::span<const std::int64_t> sample_tokens, int cp,
                                                                   int cp_rank, CpSharding sharding);

}  // namespace tessera
