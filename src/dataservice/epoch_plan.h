// The data service's epoch plan (issue 35, DistTrain's disaggregated data preprocessing): which
// trainer rank receives which samples, in which micro-batch and in which order, for one epoch.
// The samples are shuffled by (seed, epoch), then streamed through the balancer
// (balance/stream_balancer.h: per-step packing under the micro-batch token cap, outlier delay)
// until every sample is placed. A step's D x M slots are the ranks' micro-batches: slot s is rank
// s / M's micro-batch s % M (then, with a pipeline, in its 1F1B order). Every rank gets
// steps x M micro-batches, so ranks stay in lockstep;
// a slot the last steps leave empty is an empty micro-batch. The same (samples, settings) give
// the same plan on every machine: the coordinator rebuilds it after a restart instead of saving it.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "balance/context_parallel_sharding.h"
#include "balance/sample_cost.h"
#include "balance/sample_tokens.h"
#include "balance/stream_balancer.h"

namespace tessera {

struct EpochSettings {
  int ranks = 1;              // data-parallel trainer ranks
  int microbatches = 1;       // micro-batches per rank and step
  std::int64_t max_tokens = 0;  // tokens of one micro-batch (its packed sequence)
  BalanceMethod method = BalanceMethod::wlb;
  std::uint64_t seed = 0;
  std::int64_t epoch = 0;
  // Pipeline stages of each rank's replica: above 1, each step's micro-batches of a rank are put in
  // the 1F1B order that shortens its pipeline (balance/microbatch_order.h).
  int pipeline_stages = 1;
  // Context-parallel ranks per data-parallel rank: each micro-batch is served to all of them, each
  // processing its shard (dataservice/context_parallel_shard.h). Trainer ranks: ranks x cp.
  int context_parallel = 1;
  int trainer_ranks() const { return ranks * context_parallel; }
  // Throws Error naming --ranks, --microbatches, --max-tokens, --method, --pp or --cp.
  void validate() const;
};

// One micro-batch of one rank: what a worker builds and the rank receives.
struct MicroBatchTask {
  std::int64_t id = 0;        // position in EpochPlan::tasks
  int rank = 0;
  std::int64_t position = 0;  // its place in the rank's order (the rank's cursor)
  int step = 0;
  int microbatch = 0;
  std::vector<std::int64_t> samples;  // sample ids (index lines), in packing order
  // With context parallelism, how the packed sequence is split (the faster way for its documents).
  CpSharding cp_sharding = CpSharding::per_sequence;
};

struct EpochPlan {
  EpochSettings settings;
  std::vector<MicroBatchTask> tasks;  // rank 0's in order, then rank 1's, ...
  std::int64_t per_rank = 0;          // micro-batches of each rank: steps x microbatches
  const MicroBatchTask& at(int rank, std::int64_t position) const {
    return tasks[static_cast<std::size_t>(rank * per_rank + position)];
  }
};

// `time_s[i]` is sample i's predicted training time (balance/sample_cost.h); `backbone` prices the
// context-parallel split (needed when context_parallel > 1). Throws Error naming the sample
// ("sample N") when one is longer than max_tokens, so the plan places every sample once.
EpochPlan plan_epoch(std::span<const SampleTokens> samples, std::span<const double> time_s, const EpochSettings& settings,
                     const SpanCost* backbone = nullptr);

}  // namespace tessera
