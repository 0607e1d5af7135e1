// What leaves the GPU when state is offloaded (cost/offloaded_state.h): the moved bytes land on the
// named tier (conservation), plus the fp32 gradients the host optimizer reads; what each framework
// keeps on the GPU.
#include "cost/offloaded_state.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

MemoryBreakdown resident() {
  MemoryBreakdown m;
  m.weights_bytes = 20 * kGiB;
  m.gradients_bytes = 40 * kGiB;
  m.optimizer_bytes = 120 * kGiB;
  m.activations_bytes = 30 * kGiB;
  m.logits_bytes = 2 * kGiB;
  return m;
}

Plan plan(TrainingFramework f, StatePlacement where) {
  Plan p;
  p.framework = f;
  p.zero = OptimizerSharding::zero3;
  p.offload = where;
  return p;
}

constexpr MemoryTier kOnGpu = MemoryTier::gpu, kOnCpu = MemoryTier::cpu, kOnNvme = MemoryTier::nvme;
constexpr double kParams = 10e9;  // 10 G parameters in the optimizer shard: 40 GB of fp32 gradients

TEST(OffloadedState, TheOptimizerMovesWithItsFp32GradientsAndDeepSpeedKeepsItsBuckets) {
  MemoryBreakdown m = resident();
  Plan p = plan(TrainingFramework::deepspeed, {kOnCpu, kOnGpu, kOnGpu});
  p.overlap_grad_reduce = false;
  move_offloaded_state(m, p, {kParams, 1 * kGiB, 26 * kGiB});
  EXPECT_EQ(m.optimizer_bytes, 0.0);
  EXPECT_DOUBLE_EQ(m.host_bytes, 120 * kGiB + kHostGradBytesPerParam * kParams);
  EXPECT_DOUBLE_EQ(m.gradients_bytes, kDeepSpeedReduceBucketBytes);  // one 5e8-element fp16 bucket
  // overlap_comm double-buffers the bucket; a pipeline turns overlap_comm off again.
  MemoryBreakdown overlapped = resident();
  p.overlap_grad_reduce = true;
  move_offloaded_state(overlapped, p, {kParams, 1 * kGiB, 26 * kGiB});
  EXPECT_DOUBLE_EQ(overlapped.gradients_bytes, 2 * kDeepSpeedReduceBucketBytes);
  MemoryBreakdown piped = resident();
  p.pp = 2;
  move_offloaded_state(piped, p, {kParams, 1 * kGiB, 26 * kGiB});
  EXPECT_DOUBLE_EQ(piped.gradients_bytes, kDeepSpeedReduceBucketBytes);
  EXPECT_EQ(m.weights_bytes, 20 * kGiB);
  EXPECT_EQ(m.nvme_bytes, 0.0);
}

TEST(OffloadedState, MegatronKeepsItsMainGradientBufferOnTheGpu) {
  MemoryBreakdown m = resident();
  move_offloaded_state(m, plan(TrainingFramework::megatron, {kOnCpu, kOnGpu, kOnGpu}), {kParams, 1 * kGiB, 26 * kGiB});
  EXPECT_EQ(m.gradients_bytes, 40 * kGiB);
  EXPECT_EQ(m.optimizer_bytes, 0.0);
}

TEST(OffloadedState, NvmeHoldsTheOptimizerAndParametersStageThroughPinnedHostBuffers) {
  const MemoryBreakdown before = resident();
  MemoryBreakdown m = before;
  move_offloaded_state(m, plan(TrainingFramework::deepspeed, {kOnNvme, kOnNvme, kOnGpu}), {kParams, 1 * kGiB, 26 * kGiB});
  // The fp32 gradients go to NVMe with the state; the host keeps 4 pinned sub-group buffers of
  // 1e9 fp32 elements (16 GB: the shard is larger than a sub-group) and the parameter staging.
  EXPECT_DOUBLE_EQ(m.nvme_bytes, before.optimizer_bytes + before.weights_bytes + kHostGradBytesPerParam * kParams);
  EXPECT_DOUBLE_EQ(m.host_bytes, 16e9 + kDeepSpeedParamStagingBytes);
  EXPECT_EQ(m.weights_bytes, 0.0);
}

// 30 GiB of activations of which 26 are saved for backward (the other 4: the recomputed layer's
// working tensors, which stay): all but a two-layer window of the saved ones leave.
TEST(OffloadedState, SavedActivationsLeaveAllButATwoLayerWindowAndNothingIsLost) {
  const MemoryBreakdown before = resident();
  MemoryBreakdown m = before;
  move_offloaded_state(m, plan(TrainingFramework::pytorch, {kOnGpu, kOnGpu, kOnCpu}), {kParams, 1 * kGiB, 26 * kGiB});
  EXPECT_DOUBLE_EQ(m.activations_bytes, 4 * kGiB + kActivationWindowLayers * kGiB);
  EXPECT_DOUBLE_EQ(m.activations_bytes + m.host_bytes, before.activations_bytes);
  EXPECT_DOUBLE_EQ(m.total(), before.total() - m.host_bytes);
}

TEST(OffloadedState, FsdpMovesGradientsWithTheShardedParameters) {
  MemoryBreakdown m = resident();
  move_offloaded_state(m, plan(TrainingFramework::torchtitan, {kOnCpu, kOnCpu, kOnGpu}), {kParams, 1 * kGiB, 26 * kGiB});
  EXPECT_EQ(m.gradients_bytes, 0.0);
  EXPECT_EQ(m.weights_bytes, 0.0);
  EXPECT_DOUBLE_EQ(m.host_bytes, 120 * kGiB + 20 * kGiB + kHostGradBytesPerParam * kParams);
}

}  // namespace
}  // namespace tessera
