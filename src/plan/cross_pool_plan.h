// CrossPoolPlan: one pipeline whose stages sit on different GPU pools of a mixed cluster
// (HeteroPP, H2 2025; Metis, Zhang et al., ATC'24): the pipeline is cut into segments, each a
// run of consecutive stages on one pool with its own tp and layer count, so a slow or
// memory-poor pool takes fewer layers per stage. Every segment has the same data-parallel
// degree (replica r of stage s reduces its gradients with replica r' of the same stage, inside
// its pool), and each segment uses all of its pool's GPUs: dp x tp x stages = the pool's GPUs.
// Megatron-LM cannot express this layout; formats/cross_pool_plan_json.h writes its rank layout.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "hardware/mixed_cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

struct PipelineSegment {
  std::size_t pool = 0;      // index into MixedCluster::pools
  std::int64_t tp = 1;
  std::int64_t stages = 1;
  std::int64_t layers = 0;   // transformer layers over its stages
  // Each segment may run its own precision: FP8 on a pool that has FP8 tensor cores, 16-bit on
  // one that has not (Megatron-Core already mixes them per layer: --first-last-layers-bf16 keeps
  // the first and last layers in 16-bit, megatron/core/fp8_utils.py, d98e8a64).
  Precision precision = Precision::bf16;
  Fp8Recipe fp8_recipe = Fp8Recipe::tensorwise;
};

struct CrossPoolPlan {
  // dp, micro_batch, recompute, zero and the overlap switches, shared by every segment; its tp,
  // pp, cp, ep, vpp and precision are not used (tp and precision are per segment, cp = ep = vpp = 1).
  Plan base;
  std::vector<PipelineSegment> segments;  // in pipeline order: the first holds the embedding

  std::int64_t stages() const {
    std::int64_t total = 0;
    for (const auto& s : segments) total += s.stages;
    return total;
  }
  std::int64_t gpus() const {
    std::int64_t total = 0;
    for (const auto& s : segments) total += base.dp * s.tp * s.stages;
    return total;
  }
};

// Layers of stage i (0-based) of a segment: an equal share, the last (layers mod stages) stages
// one more (the earlier stages of a segment hold more micro-batches' activations under 1F1B).
std::int64_t segment_stage_layers(const PipelineSegment& segment, std::int64_t i);

// The plan as one homogeneous Plan per segment on its pool (its tp, pp = the whole pipeline's
// stages, sequence parallelism where tp > 1): what the per-stage cost model is given.
Plan segment_plan(const CrossPoolPlan& plan, const PipelineSegment& segment);

// Throws Error naming the field (segments, pool, tp, stages, layers, dp, mb, ...) when the shape
// is invalid: fewer than two segments, a pool used twice or unknown, a segment that does not use
// exactly its pool's GPUs, a tp that does not divide the heads or crosses a node, layers that do
// not add up to the model's, a global batch not a multiple of dp x micro-batch.
void validate_cross_pool_plan(const CrossPoolPlan& plan, const ModelSpec& model, const MixedCluster& cluster,
                              const Workload& workload);

}  // namespace tessera
