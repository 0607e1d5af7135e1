// The data-parallel collectives that overlap cannot hide: the bucket holding the embedding, whose
// gradient is complete only when the backward ends and whose weights the next forward needs first
// (Megatron-Core's param_and_grad_buffer.py at d98e8a64), and under ZeRO-3 the embedding's unit,
// gathered first and reduced last every micro-batch. Closed forms on plans whose compute is long
// enough to hide every other bucket.
#include <gtest/gtest.h>

#include <cstdint>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "cost/collective_cost.h"
#include "cost/cost_model.h"
#include "cost/memory_model.h"
#include "model/parameter_count.h"

namespace tessera {
namespace {

struct Bucket {
  double reduce_s = 0, gather_s = 0;
};

// The embedding's reduce-scatter (fp32 gradients) and all-gather (16-bit weights) over the
// data-parallel group, for a vocab-parallel embedding split tp ways.
Bucket embedding_bucket(const ModelSpec& m, const Cluster& c, const Plan& p) {
  const double params = count_parameters(m).embedding / static_cast<double>(p.tp);
  const GroupLink link = group_link(c, p.tp, p.dp * p.cp);
  return {reduce_scatter_time_s(kGradBytesPerParam * params, p.dp * p.cp, link),
          all_gather_time_s(kWeightBytesPerParam * params, p.dp * p.cp, link)};
}

Plan sharded_plan(std::int64_t tp, std::int64_t dp, OptimizerSharding zero) {
  Plan p;
  p.tp = tp;
  p.dp = dp;
  p.micro_batch = 1;
  p.zero = zero;
  p.recompute = Recompute::none;
  return p;
}

// Llama 3 8B (its 128,256 x 4,096 embedding is 2.4 times a layer) on 64 H100.
struct Llama8b {
  ModelSpec m = builtin_model("llama3-8b");
  Cluster c = load_cluster("h100-sxm-80gb:64");
};

// ZeRO-1 with both overlaps: every other bucket hides under one micro-batch's backward (the
// reduce-scatter) or forward (the gather); exactly the embedding bucket's two collectives are
// exposed, whatever the tensor split or the number of micro-batches (once per step).
TEST(DataParallelTail, Zero1ExposesExactlyTheEmbeddingBucket) {
  const Llama8b x;
  for (std::int64_t tp : {1, 2})
    for (std::int64_t microbatches : {1, 3}) {
      const Plan p = sharded_plan(tp, 64 / tp, OptimizerSharding::zero1);
      const Bucket b = embedding_bucket(x.m, x.c, p);
      ASSERT_GT(b.reduce_s, 0.0);
      const Estimate e = estimate(x.m, x.c, p, Workload{p.dp * microbatches, 8192});
      EXPECT_NEAR(e.time.dp_comm_s, b.reduce_s + b.gather_s, 1e-9 * e.time.dp_comm_s)
          << "tp " << tp << ", micro-batches " << microbatches;
    }
}

// Without --overlap-param-gather the whole gather is exposed and the embedding's adds nothing to
// it; the reduction's tail stays.
TEST(DataParallelTail, WithoutGatherOverlapOnlyTheReductionTailIsAdded) {
  const Llama8b x;
  Plan p = sharded_plan(1, 64, OptimizerSharding::zero1);
  p.overlap_param_gather = false;
  const Estimate e = estimate(x.m, x.c, p, Workload{64, 8192});
  const StageParameters all = stage_parameters(x.m, p, StageShape{x.m.layers, 0, -1, true, true, 1.0});
  const double gather_s = all_gather_time_s(kWeightBytesPerParam * all.total(), p.dp, group_link(x.c, p.tp, p.dp));
  EXPECT_NEAR(e.time.dp_comm_s, embedding_bucket(x.m, x.c, p).reduce_s + gather_s, 1e-9 * e.time.dp_comm_s);
}

// Without any overlap the collectives are exposed whole: the tail is a floor on what overlap
// can hide, never an addition to an unhidden collective.
TEST(DataParallelTail, IsAFloorNotAnAddition) {
  const Llama8b x;
  Plan on = sharded_plan(1, 64, OptimizerSharding::zero1), off = on;
  off.overlap_grad_reduce = false;
  off.overlap_param_gather = false;
  const Estimate hidden = estimate(x.m, x.c, on, Workload{64, 8192});
  const Estimate exposed = estimate(x.m, x.c, off, Workload{64, 8192});
  const StageParameters all = stage_parameters(x.m, off, StageShape{x.m.layers, 0, -1, true, true, 1.0});
  const GroupLink link = group_link(x.c, off.tp, off.dp);
  const double whole_s = reduce_scatter_time_s(kGradBytesPerParam * all.total(), off.dp, link) +
                         all_gather_time_s(kWeightBytesPerParam * all.total(), off.dp, link);
  EXPECT_NEAR(exposed.time.dp_comm_s, whole_s, 1e-9 * whole_s);
  EXPECT_GT(exposed.time.dp_comm_s, hidden.time.dp_comm_s);
}

// ZeRO-3: the embedding's unit is gathered and reduce-scattered every micro-batch, first and
// last, so it is exposed once per micro-batch.
TEST(DataParallelTail, Zero3ExposesTheEmbeddingUnitEveryMicroBatch) {
  const Llama8b x;
  for (std::int64_t microbatches : {1, 3}) {
    const Plan p = sharded_plan(1, 64, OptimizerSharding::zero3);
    const Bucket b = embedding_bucket(x.m, x.c, p);
    const Estimate e = estimate(x.m, x.c, p, Workload{64 * microbatches, 8192});
    const double expected = static_cast<double>(microbatches) * (b.reduce_s + b.gather_s);
    EXPECT_NEAR(e.time.dp_comm_s, expected, 1e-9 * expected) << microbatches;
    EXPECT_EQ(e.overlap.zero3_exposed_s, e.time.dp_comm_s);
  }
}

// LoRA trains no embedding: nothing of it is reduced, and nothing is exposed for it.
TEST(DataParallelTail, AFrozenEmbeddingExposesNothing) {
  const Llama8b x;
  for (OptimizerSharding zero : {OptimizerSharding::zero1, OptimizerSharding::zero3}) {
    Plan p = sharded_plan(1, 64, zero);
    p.tuning.task = TrainingTask::lora;
    p.tuning.lora_rank = 16;
    const Estimate e = estimate(x.m, x.c, p, Workload{64, 8192});
    EXPECT_LT(e.time.dp_comm_s, embedding_bucket(x.m, x.c, p).reduce_s) << to_string(zero);
  }
}

}  // namespace
}  // namespace tessera
