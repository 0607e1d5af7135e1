#include "plan/cross_pool_plan.h"

#include <string>

#include "core/checks.h"
#include "core/error.h"

namespace tessera {

std::int64_t segment_stage_layers(const PipelineSegment& segment, std::int64_t i) {
  const std::int64_t base = segment.layers / segment.stages;
  const std::int64_t longer = segment.layers % segment.stages;
  return base + (i >= segment.stages - longer ? 1 : 0);
}

Plan segment_plan(const CrossPoolPlan& plan, const PipelineSegment& segment) {
  Plan p = plan.base;
  p.tp = segment.tp;
  p.pp = plan.stages();
  p.cp = 1;
  p.ep = 1;
  p.etp = 0;
  p.vpp = 1;
  p.first_stage_layers = 0;
  p.last_stage_layers = 0;
  p.account_embedding = p.account_loss = false;
  p.precision = segment.precision;
  p.fp8_recipe = segment.fp8_recipe;
  p.fp8_param_gather = false;
  p.sequence_parallel = segment.tp > 1 && plan.base.sequence_parallel;
  p.overlap_tp_comm = p.sequence_parallel && plan.base.overlap_tp_comm;
  return p;
}

namespace {

void validate_segment(const PipelineSegment& s, const CrossPoolPlan& plan, const ModelSpec& model,
                      const MixedCluster& cluster) {
  if (s.pool >= cluster.pools.size())
    throw Error("pool", "pool " + std::to_string(s.pool) + " does not exist",
                "0 to " + std::to_string(cluster.pools.size() - 1));
  const Cluster& pool = cluster.pools[s.pool];
  require_positive("tp", s.tp, pool.gpus_per_node);
  require_positive("stages", s.stages, model.layers);
  if (model.heads % s.tp != 0)
    throw Error("tp", std::to_string(s.tp) + " does not divide the " + std::to_string(model.heads) + " attention heads",
                "a divisor of " + std::to_string(model.heads));
  if (model.attention != AttentionKind::mla && model.kv_heads % s.tp != 0 && s.tp % model.kv_heads != 0)
    throw Error("tp", std::to_string(s.tp) + " neither divides nor is a multiple of the " +
                          std::to_string(model.kv_heads) + " kv heads",
                "a divisor or multiple of " + std::to_string(model.kv_heads));
  if (pool.gpus_per_node % s.tp != 0)
    throw Error("tp", std::to_string(s.tp) + " does not divide the pool's " + std::to_string(pool.gpus_per_node) +
                          " GPUs per node (a tp group stays in one node)",
                "a divisor of " + std::to_string(pool.gpus_per_node));
  if (saturating_product({plan.base.dp, s.tp, s.stages}) != pool.gpus())
    throw Error("stages", "dp*tp*stages = " + std::to_string(plan.base.dp * s.tp * s.stages) + " on pool " +
                              std::to_string(s.pool) + " of " + std::to_string(pool.gpus()) + " GPUs",
                "dp*tp*stages equal to the pool's GPUs");
  if (s.precision == Precision::fp8 && pool.gpu.fp8_tflops <= 0)
    throw Error("precision", "fp8 is not supported on " + pool.gpu.key + " (pool " + std::to_string(s.pool) + ")",
                "bf16");
  if (s.precision == Precision::fp8 && s.fp8_recipe == Fp8Recipe::mxfp8 && !pool.gpu.mxfp8)
    throw Error("fp8_recipe", "mxfp8 needs Blackwell-class tensor cores, not " + pool.gpu.key,
                "delayed, tensorwise, blockwise");
  if (s.layers < s.stages)
    throw Error("layers", std::to_string(s.layers) + " layers over " + std::to_string(s.stages) + " stages",
                "at least one layer per stage");
}

}  // namespace

void validate_cross_pool_plan(const CrossPoolPlan& plan, const ModelSpec& model, const MixedCluster& cluster,
                              const Workload& workload) {
  workload.validate();
  if (plan.segments.size() < 2 || plan.segments.size() > cluster.pools.size())
    throw Error("segments", std::to_string(plan.segments.size()) + " segments on " +
                                std::to_string(cluster.pools.size()) + " pools",
                "2 to " + std::to_string(cluster.pools.size()) + " segments, one per pool");
  require_positive("dp", plan.base.dp, workload.global_batch);
  require_positive("mb", plan.base.micro_batch, workload.global_batch);
  std::int64_t layers = 0;
  for (std::size_t i = 0; i < plan.segments.size(); ++i) {
    validate_segment(plan.segments[i], plan, model, cluster);
    for (std::size_t j = 0; j < i; ++j)
      if (plan.segments[j].pool == plan.segments[i].pool)
        throw Error("pool", "pool " + std::to_string(plan.segments[i].pool) + " holds two segments",
                    "each pool at most once");
    layers += plan.segments[i].layers;
  }
  if (layers != model.layers)
    throw Error("layers", "the segments hold " + std::to_string(layers) + " layers, the model " +
                              std::to_string(model.layers),
                "segment layers summing to " + std::to_string(model.layers));
  if (workload.global_batch % (plan.base.dp * plan.base.micro_batch) != 0)
    throw Error("gbs", "global batch " + std::to_string(workload.global_batch) + " is not a multiple of dp*mb = " +
                           std::to_string(plan.base.dp * plan.base.micro_batch),
                "a multiple of " + std::to_string(plan.base.dp * plan.base.micro_batch));
  if (plan.base.cp != 1 || plan.base.vpp != 1 || plan.base.ep != 1)
    throw Error("cp", "cross-pool pipelines run cp = ep = vpp = 1", "1");
  if (plan.base.zero == OptimizerSharding::zero3)
    throw Error("zero", "cross-pool pipelines keep each stage's weights whole (no ZeRO-3)", "none, zero1, zero2");
}

}  // namespace tessera
