// The time and memory of one training iteration of a CrossPoolPlan (plan/cross_pool_plan.h): a
// pipeline whose stages sit on different pools of a mixed cluster. Each stage is costed on its
// own pool's GPUs and links (cost/stage_slice_cost.h), the step runs through the event-driven
// 1F1B simulator (schedule/pipeline_simulator.h) with per-stage times, per-boundary p2p and
// per-stage gradient syncs, and each stage's memory is checked against its own GPU.
//
// Stage boundaries inside a pool send 1/tp of each activation over NVLink or the NIC, as in
// cost_model.cpp. The boundary between two pools carries every data-parallel replica's
// activation at once through the link that joins the pools (MixedCluster::inter_pool, the
// aggregate of all cross-pool links): dp x activation / bandwidth + latency per micro-batch and
// direction, so a slower link between pools shows up in the step time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cost/stage_slice_cost.h"
#include "hardware/mixed_cluster.h"
#include "model/model_spec.h"
#include "plan/cross_pool_plan.h"
#include "schedule/pipeline_simulator.h"

namespace tessera {

struct CrossPoolStageEstimate {
  std::size_t pool = 0;
  std::int64_t tp = 1;
  std::int64_t first_layer = 0;
  std::int64_t layers = 0;
  double forward_s = 0;   // one micro-batch
  double backward_s = 0;
  double dp_sync_s = 0;
  double peak_memory_bytes = 0;
  double usable_memory_bytes = 0;
  bool fits = false;
};

struct CrossPoolEstimate {
  double iteration_time_s = 0;
  double pipeline_s = 0;       // the simulated pipeline, before the last gradient syncs
  double steady_s = 0;         // micro-batches x the busiest stage's forward + backward
  double bubble_s = 0;         // pipeline_s - steady_s (fill, drain, waiting on slower stages)
  double dp_sync_s = 0;        // gradient syncs after the pipeline (the exposed part)
  double tail_s = 0;           // exposed parameter gathers and the optimizer step
  double boundary_p2p_s = 0;   // one micro-batch's activation across each pool boundary
  double tokens_per_s = 0;
  double model_flops = 0;
  double mfu = 0;              // model FLOPs over the used GPUs' summed 16-bit dense peak (estimate.h)
  bool fits = false;           // every stage within its GPU's usable memory
  std::vector<CrossPoolStageEstimate> stages;  // pipeline order
};

// What the simulator is given for one plan; the search fills it for many candidates in place.
struct CrossPoolPipelineInputs {
  std::vector<StageSliceCost> stages;  // per stage
  std::vector<double> p2p_s;           // boundary s -> s + 1 ([stages - 1] unused, 0)
  std::int64_t microbatches = 1;
  bool overlap_grad_reduce = true;
};

// One micro-batch's activation across a boundary inside a pool (stage `local` -> `local + 1` of
// the segment), and across the boundary between two pools.
double within_pool_boundary_s(const ModelSpec& model, const Cluster& pool, const Plan& segment_plan,
                              const Workload& workload, std::int64_t local);
double cross_pool_boundary_s(const ModelSpec& model, const MixedCluster& cluster, const Plan& base,
                             const Workload& workload);

// Never above the simulated time: the busiest stage runs every micro-batch's forward and
// backward one after another, and the tail follows the pipeline.
double cross_pool_lower_bound_s(const CrossPoolPipelineInputs& inputs);
// The iteration's time: the simulated makespan with gradient syncs plus the tail. `costs` and
// `simulator` are reused buffers; *pipeline_s gets the pipeline part.
double simulate_cross_pool(const CrossPoolPipelineInputs& inputs, PipelineSimulator& simulator, PipelineCosts& costs,
                           double* pipeline_s = nullptr);

// Preconditions: validate_cross_pool_plan() passed.
CrossPoolEstimate estimate_cross_pool(const ModelSpec& model, const MixedCluster& cluster, const CrossPoolPlan& plan,
                                      const Workload& workload);
// The simulated timeline of the same iteration (for traces and reports).
Timeline cross_pool_timeline(const ModelSpec& model, const MixedCluster& cluster, const CrossPoolPlan& plan,
                             const Workload& workload);

}  // namespace tessera
