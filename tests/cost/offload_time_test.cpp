// The offload terms of an iteration (cost/offload_time.h) in closed form: the CPU step at the
// node's rate over all its GPUs' shards, NVMe's read-and-write bound, copies hidden up to the
// compute they run beside.
#include "cost/offload_time.h"

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"

namespace tessera {
namespace {

constexpr MemoryTier kGpu = MemoryTier::gpu, kCpu = MemoryTier::cpu, kNvme = MemoryTier::nvme;

Cluster node(std::int64_t gpus) {
  Cluster c = make_cluster(find_gpu("a100-sxm-80gb"), gpus);
  c.gpu.host.memory_gib = 2048;
  c.gpu.host.link_gbps = 20;
  c.gpu.host.cpu_adam_gparams_per_s = 2;
  c.gpu.host.nvme_tb = 15;
  c.gpu.host.nvme_gbps = 24;
  return c;
}

Plan placed(StatePlacement where) {
  Plan p;
  p.framework = TrainingFramework::deepspeed;
  p.zero = OptimizerSharding::zero3;
  p.offload = where;
  return p;
}

TEST(OffloadTime, TheNodesCpuStepsEveryGpusShard) {
  // 8 GPUs x 1 G parameters at 2 G/s: 4 s; one GPU alone: 0.5 s.
  EXPECT_DOUBLE_EQ(cpu_optimizer_step_s(placed({kCpu, kGpu, kGpu}), node(8), 1e9), 4.0);
  EXPECT_DOUBLE_EQ(cpu_optimizer_step_s(placed({kCpu, kGpu, kGpu}), node(1), 1e9), 0.5);
  // From NVMe: 16 B read and 12 B written per parameter over 24 GB/s for 8 G parameters,
  // 9.33 s > 4 s.
  EXPECT_DOUBLE_EQ(cpu_optimizer_step_s(placed({kNvme, kGpu, kGpu}), node(8), 1e9), 28.0 * 8e9 / 24e9);
}

TEST(OffloadTime, NvmeCopiesShareTheDrivesAmongTheNodesGpus) {
  EXPECT_DOUBLE_EQ(tier_bytes_per_s(node(8), kCpu), 20e9);
  EXPECT_DOUBLE_EQ(tier_bytes_per_s(node(8), kNvme), 3e9);  // 24 GB/s over 8 GPUs
  EXPECT_DOUBLE_EQ(tier_bytes_per_s(node(1), kNvme), 20e9);  // one GPU: the host link binds
}

TEST(OffloadTime, CopiesHideUnderCompute) {
  OffloadTraffic t;
  t.optimizer_params = 1e9;
  t.grad_bytes_per_param = 2;     // 2 GB down: 0.1 s at 20 GB/s
  t.upload_bytes_per_param = 2;   // 2 GB up after the step: 0.1 s, exposed
  t.last_backward_s = 0.05;
  t.param_bytes_per_microbatch = 4e9;  // 0.2 s per micro-batch
  t.microbatch_compute_s = 0.15;
  t.microbatches = 4;
  const double want = (0.1 - 0.05) + 0.1 + 4 * (0.2 - 0.15);
  EXPECT_NEAR(offload_exposed_s(placed({kCpu, kCpu, kGpu}), node(1), t), want, 1e-12);
  t.microbatch_compute_s = 1.0;  // every parameter copy hidden
  EXPECT_NEAR(offload_exposed_s(placed({kCpu, kCpu, kGpu}), node(1), t), 0.05 + 0.1, 1e-12);
  EXPECT_EQ(offload_exposed_s(placed({}), node(1), t), 0.0);
}

}  // namespace
}  // namespace tessera
