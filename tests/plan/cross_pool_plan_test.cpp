// The shape rules of a pipeline across pools.
#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/error.h"
#include "plan/cross_pool_plan.h"

namespace tessera {
namespace {

CrossPoolPlan valid_plan() {
  CrossPoolPlan plan;
  plan.base.dp = 2;
  plan.base.micro_batch = 1;
  plan.segments = {{0, 4, 2, 10, Precision::bf16, Fp8Recipe::tensorwise}, {1, 2, 2, 22, Precision::bf16, Fp8Recipe::tensorwise}};  // 2 x 4 x 2 = 16 A100, 2 x 2 x 2 = 8 H100
  return plan;
}

std::string cross_pool_field_of(const CrossPoolPlan& plan, const ModelSpec& model, const MixedCluster& cluster,
                     const Workload& w) {
  try {
    validate_cross_pool_plan(plan, model, cluster, w);
  } catch (const Error& e) {
    return e.field();
  }
  return "";
}

TEST(CrossPoolPlan, EachBrokenRuleNamesItsField) {
  const ModelSpec model = builtin_model("llama3-8b");  // 32 layers, 32 heads, 8 kv heads
  const MixedCluster cluster = load_mixed_cluster("a100-sxm-40gb:16+h100-sxm-80gb:8");
  const Workload w{32, 4096};
  EXPECT_EQ(cross_pool_field_of(valid_plan(), model, cluster, w), "");
  CrossPoolPlan p = valid_plan();
  p.segments.pop_back();
  EXPECT_EQ(cross_pool_field_of(p, model, cluster, w), "segments");
  p = valid_plan();
  p.segments[1].pool = 0;
  EXPECT_EQ(cross_pool_field_of(p, model, cluster, w), "stages");  // 8 GPUs of the 16-GPU pool
  p = valid_plan();
  p.segments[1].pool = 5;
  EXPECT_EQ(cross_pool_field_of(p, model, cluster, w), "pool");
  p = valid_plan();
  p.segments[0].stages = 1;  // 2 x 4 x 1 = 8 of 16
  p.segments[0].layers = 10;
  EXPECT_EQ(cross_pool_field_of(p, model, cluster, w), "stages");
  p = valid_plan();
  p.segments[0].tp = 3;
  EXPECT_EQ(cross_pool_field_of(p, model, cluster, w), "tp");
  p = valid_plan();
  p.segments[0].tp = 16;  // beyond a node
  EXPECT_EQ(cross_pool_field_of(p, model, cluster, w), "tp");
  p = valid_plan();
  p.segments[1].layers = 21;
  EXPECT_EQ(cross_pool_field_of(p, model, cluster, w), "layers");
  p = valid_plan();
  p.segments[0].layers = 1;  // fewer layers than stages
  p.segments[1].layers = 31;
  EXPECT_EQ(cross_pool_field_of(p, model, cluster, w), "layers");
  p = valid_plan();
  p.base.micro_batch = 3;
  EXPECT_EQ(cross_pool_field_of(p, model, cluster, w), "gbs");
  p = valid_plan();
  p.base.zero = OptimizerSharding::zero3;
  EXPECT_EQ(cross_pool_field_of(p, model, cluster, w), "zero");
  p = valid_plan();
  p.base.cp = 2;
  EXPECT_EQ(cross_pool_field_of(p, model, cluster, w), "cp");
  p = valid_plan();
  p.segments[0].precision = Precision::fp8;  // the A100 has no FP8 tensor cores
  EXPECT_EQ(cross_pool_field_of(p, model, cluster, w), "precision");
  p.segments[0].precision = Precision::bf16;
  p.segments[1].precision = Precision::fp8;  // the H100 has
  EXPECT_EQ(cross_pool_field_of(p, model, cluster, w), "");
  p = valid_plan();
  p.base.dp = 0;
  EXPECT_EQ(cross_pool_field_of(p, model, cluster, w), "dp");
}

// A segment's layers: equal shares, the remainder on its last stages; they add up.
TEST(CrossPoolPlan, SegmentLayersAddUp) {
  for (std::int64_t stages = 1; stages <= 9; ++stages)
    for (std::int64_t layers = stages; layers <= 40; ++layers) {
      const PipelineSegment s{0, 1, stages, layers, Precision::bf16, Fp8Recipe::tensorwise};
      std::int64_t total = 0;
      for (std::int64_t i = 0; i < stages; ++i) {
        const std::int64_t n = segment_stage_layers(s, i);
        EXPECT_TRUE(n == layers / stages || n == layers / stages + 1);
        if (i > 0) {
          EXPECT_GE(n, segment_stage_layers(s, i - 1));
        }
        total += n;
      }
      EXPECT_EQ(total, layers);
    }
}

}  // namespace
}  // namespace tessera
