// Plans for a MixedCluster: every pool runs its own plan (its own tp, pp, dp, ...) on a share of
// the global batch, in proportion to its speed, and the pools reduce their gradients over the
// inter-pool link once per step (after each pool's own reduction, not overlapped). A pool that
// would slow the job down is left out. Reported against the best single pool alone.
//
// Shares: start from each pool's throughput when it runs the whole batch alone, round to whole
// sequences, then move sequences from the slowest pool to the others while the step gets faster
// (each move re-plans only the two pools involved). Every subset of pools is tried.
//
// Beside these whole-replica plans, one pipeline across pools (search/cross_pool_search.h):
// stages on different pools, each with its own tp and layer count. The answer is the fastest of
// the best single pool, the whole-replica plan and the cross-pool pipeline (ties keep that order).
#pragma once

#include <limits>
#include <optional>
#include <vector>

#include "cost/cross_pool_pipeline_cost.h"
#include "hardware/mixed_cluster.h"
#include "plan/cross_pool_plan.h"
#include "search/planner.h"

namespace tessera {

struct PoolAssignment {
  std::size_t pool = 0;           // index into MixedCluster::pools
  std::int64_t global_batch = 0;  // sequences per step on this pool
  RankedPlan plan;                // the pool's best plan for its share
};

enum class MixedStrategy { none, single_pool, whole_replicas, cross_pool };
const char* to_string(MixedStrategy strategy);

struct MixedPlan {
  MixedStrategy strategy = MixedStrategy::none;  // what the answer is
  double iteration_time_s = 0;        // of the answer
  double tokens_per_s = 0;
  // The best plan with whole replicas per pool (a single pool when that is fastest).
  std::vector<PoolAssignment> pools;  // the pools used (others are left out)
  double replica_time_s = 0;          // slowest pool + cross-pool gradient sync; 0 if none fits
  double sync_time_s = 0;
  // The best pipeline across pools, when one fits.
  std::optional<CrossPoolPlan> cross_pool;
  CrossPoolEstimate cross_pool_estimate;
  // The time a cross-pool pipeline had to beat to be searched to the end: the whole-replica
  // answer (infinity: no bound). No cross_pool with a finite bound: none fits and beats it.
  double cross_pool_must_beat_s = std::numeric_limits<double>::infinity();
  std::int64_t cross_pool_evaluated = 0;
  std::int64_t cross_pool_simulated = 0;
  // The best single pool running the whole batch alone (index, its plan); time 0 if none fits.
  std::size_t best_single_pool = 0;
  double best_single_time_s = 0;
  RankedPlan best_single;
  std::vector<std::size_t> left_out;   // pools the answer does not use
  double search_time_s = 0;
};

MixedPlan search_mixed_plans(const ModelSpec& model, const MixedCluster& cluster, const Workload& workload,
                             const PlanConstraints& constraints, const PlannerOptions& options);

// The step time of `plan` (found on some cluster) on `cluster`, whose links or GPU parameters
// may differ (a changed profile): each pool's plan and share re-costed, or the cross-pool
// pipeline; infinity when the answer no longer fits. Throws Error("cluster.pools", ...) when
// the plan uses a pool `cluster` does not have.
double mixed_plan_time_s(const ModelSpec& model, const MixedCluster& cluster, const Workload& workload,
                         const MixedPlan& plan);

// Seconds to all-reduce the model's fp32 gradients across `pools` pools over the inter-pool link
// (ring over the pools: 2 (k-1)/k x bytes / bandwidth + 2 (k-1) latency).
double cross_pool_sync_s(const ModelSpec& model, const MixedCluster& cluster, std::size_t pools);

}  // namespace tessera
