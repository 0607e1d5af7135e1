#include <gtest/gtest.h>

#include "adapt/reconfiguration_cost.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "cost/memory_model.h"
#include "model/parameter_count.h"

namespace tessera {
namespace {

// A plan change writes and reads the checkpoint (weights + optimizer state) at the job's storage
// bandwidth and restarts; the time grows with the model and falls with the GPUs that share the I/O.
TEST(ReconfigurationCost, PlanChangeIsCheckpointIoPlusRestart) {
  const ModelSpec small = builtin_model("llama3-8b"), big = builtin_model("qwen2.5-32b");
  const Cluster c32 = load_cluster("h100-sxm-80gb:32"), c256 = load_cluster("h100-sxm-80gb:256");
  const ReconfigurationCost a = reconfiguration_cost(small, c32);
  const double bytes = count_parameters(small).total() * (kWeightBytesPerParam + kOptimizerBytesPerParam);
  EXPECT_DOUBLE_EQ(a.checkpoint_bytes, bytes);
  EXPECT_NEAR(a.plan_change_s, kRestartTimeS + 2.0 * bytes / (32.0 * kCheckpointBytesPerSPerGpu), 1e-9);
  EXPECT_GT(reconfiguration_cost(big, c32).plan_change_s, a.plan_change_s);
  EXPECT_LT(reconfiguration_cost(small, c256).plan_change_s, a.plan_change_s);
  EXPECT_GT(reconfiguration_cost(small, c256).plan_change_s, kRestartTimeS);
  EXPECT_EQ(a.batch_change_s, kBatchChangeTimeS);
}

TEST(ReconfigurationCost, OnlyAPlanChangeRestarts) {
  const ReconfigurationCost cost{0.0, 500.0, 1e12};
  Plan p;
  p.dp = 32;
  Plan q = p;
  EXPECT_EQ(switch_time_s(cost, p, 64, q, 64), 0.0);
  EXPECT_EQ(switch_time_s(cost, p, 64, q, 128), cost.batch_change_s);
  q.micro_batch = 2;
  EXPECT_EQ(switch_time_s(cost, p, 64, q, 64), 500.0);
  q = p;
  q.zero = OptimizerSharding::zero3;
  EXPECT_EQ(switch_time_s(cost, p, 64, q, 128), 500.0);
}

}  // namespace
}  // namespace tessera
