// The cost of one pipeline stage cut freely from a model's layers: any layer range, with or
// without the embedding and the output head, on one cluster's GPUs under one plan's tp, dp and
// switches. For pipelines whose stages differ in GPU type, tp and layer count (a pipeline across
// the pools of a mixed cluster, cost/cross_pool_pipeline_cost.h), which the Plan's Megatron
// split (first / middle / last) cannot describe. Same terms as estimate() (cost_model.h), which
// is defined beside it in cost_model.cpp.
#pragma once

#include <cstdint>
#include <memory>

#include "cost/estimate.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

struct StageSlice {
  std::int64_t first_layer = 0;
  std::int64_t layers = 0;
  bool has_embedding = false;
  bool has_output_head = false;
  // Micro-batches whose activations the stage holds at its peak (1F1B: min(p - s, m)).
  double inflight_microbatches = 1;
};

struct StageSliceCost {
  double forward_s = 0;   // one micro-batch, including its tp / cp communication
  double backward_s = 0;  // including recompute
  double dp_sync_s = 0;   // the stage's gradient reduction at the end of the step
  double dp_sync_tail_s = 0;  // of it, the bucket ready only when the backward ends (the embedding's)
  double dp_other_s = 0;  // exposed data-parallel traffic outside it (parameter gathers)
  double optimizer_s = 0;
  MemoryBreakdown memory;
};

class StageSliceCoster {
 public:
  // `plan` gives everything but the layer split: its pp is the whole pipeline's stage count (for
  // memory terms that depend on it), its vpp must be 1. Preconditions as estimate(): model,
  // cluster and workload validated, the plan's tp / dp / cp / micro-batch valid on `cluster`.
  StageSliceCoster(const ModelSpec& model, const Cluster& cluster, const Plan& plan, const Workload& workload);
  ~StageSliceCoster();
  StageSliceCoster(StageSliceCoster&&) noexcept;
  StageSliceCoster& operator=(StageSliceCoster&&) noexcept;

  StageSliceCost cost(const StageSlice& slice) const;
  // Peak memory of the slice alone (cheaper than cost()).
  double memory_bytes(const StageSlice& slice) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tessera
