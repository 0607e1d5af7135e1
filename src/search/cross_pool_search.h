// The search over cross-pool pipelines (plan/cross_pool_plan.h) of a mixed cluster: every
// ordered choice of two or more pools (the pipeline's first segment holds the embedding, the last
// the output head), every data-parallel degree and micro-batch, recompute and optimizer sharding,
// every tp and precision per segment (tp a power of two inside a node, the segment's stage count
// following since a segment uses all of its pool's GPUs; FP8 with the GPU's natural recipe where
// the pool has it and it is offered), and every split of the model's layers between segments
// (at least one layer per stage). A candidate must fit in memory on every stage's own GPU (the
// planner's limit, search/planner.h memory_limit, per pool).
//
// Exact by branch and bound: a candidate is simulated only when its lower bound (micro-batches x
// its busiest stage's forward + backward, which the simulated step never undercuts) is below the
// best time found so far, so the result equals costing every candidate (`exhaustive`, tested on
// small clusters against brute force).
//
// Left out, documented: cp, ep, vpp and ZeRO-3 (cross-pool stages run cp = ep = vpp = 1 and keep
// their weights whole), and FP8 parameter gathers.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>

#include "cost/cross_pool_pipeline_cost.h"
#include "hardware/mixed_cluster.h"
#include "plan/cross_pool_plan.h"
#include "search/planner.h"

namespace tessera {

struct CrossPoolSearch {
  std::optional<CrossPoolPlan> best;  // none when no cross-pool pipeline fits (or beats must_beat_s)
  CrossPoolEstimate estimate;         // of the best
  std::int64_t evaluated = 0;         // candidates whose bound was computed (splits a segment's layer cap excludes are not)
  std::int64_t simulated = 0;         // of which simulated (bound below the best, and fitting)
  double search_time_s = 0;
};

// Largest number of pools one cross-pool pipeline spans (orders of up to 4 pools: 60 sequences).
inline constexpr std::size_t kMaxCrossPoolSegments = 4;

// `constraints` pins what it pins (tp applies to every segment, pp to the total stage count);
// a pin the space does not hold (cp > 1, ep > 1, vpp > 1, zero3) leaves the search empty; pinned
// fp8 leaves out pools without FP8.
// `exhaustive` simulates every fitting candidate (tests). Otherwise only a pipeline faster than
// `must_beat_s` is kept (the planner passes its whole-replica answer): a candidate whose lower
// bound is not below it is skipped, so `best` is empty when none beats it.
CrossPoolSearch search_cross_pool_pipelines(const ModelSpec& model, const MixedCluster& cluster,
                                            const Workload& workload, const PlanConstraints& constraints,
                                            bool exhaustive = false,
                                            double must_beat_s = std::numeric_limits<double>::infinity());

}  // namespace tessera
