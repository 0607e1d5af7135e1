// Plans for a job that does not fit in GPU memory (issue 34): when no plan fits with every tensor
// on the GPUs, the search is repeated with state moved to host memory or NVMe, one tier at a time
// in the order that costs the least time per byte freed (plan/memory_tiers.h):
//   1. the optimizer to the CPU (its state is 12-16 of every 16-18 bytes per parameter, and
//      the step's copies are once per iteration: ZeRO-Offload);
//   2. activations to the CPU beside it (copied every micro-batch, hidden under its compute);
//   3. the parameters to the CPU (ZeRO-3 with offload_param / FSDP CPU offload: copied into GPU
//      memory for every forward and backward);
//   4. the optimizer to NVMe, then 5. the parameters to NVMe (ZeRO-Infinity).
// Each framework takes the steps it can run (plan/memory_tiers.cpp check_offload), on the tiers the cluster's
// nodes have. The ladder stops one step after the first that fits: the next step frees more
// memory, which can buy a larger micro-batch, but every later one is slower. Tiers pinned with
// --fix are searched as pinned, alone. Every step records the leanest plan it found: the reason
// each tier was needed is the step before it not fitting.
#pragma once

#include <vector>

#include "search/planner.h"

namespace tessera {

struct OffloadStep {
  StatePlacement placement;
  double min_peak_memory_bytes = 0;  // the leanest plan of the step, per GPU
  std::int64_t feasible = 0;         // plans of the step that fit
};

struct OffloadSearch {
  PlanSearch search;               // the merged ranking over every step tried (best first, top_k)
  std::vector<OffloadStep> steps;  // the placements tried, in order (the first: nothing offloaded)
  bool pinned = false;             // the tiers came from --fix, not the ladder
};

// The placements the ladder tries for a framework (before the cluster's tiers are checked).
std::vector<StatePlacement> offload_ladder(TrainingFramework framework);

OffloadSearch search_plans_with_offload(const ModelSpec& model, const Cluster& cluster, const Workload& workload,
                                        const PlanConstraints& constraints, const PlannerOptions& options);

}  // namespace tessera
