// Offload tiers as plan keys (plan/memory_tiers.h) and the plan checks that a framework can move
// the state it is asked to, on a cluster that has the tier (plan/memory_tiers.cpp check_offload).
#include "plan/memory_tiers.h"

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "common/thrown_field.h"
#include "plan/plan.h"

namespace tessera {
namespace {

using testing::thrown_field;

Cluster with_host(const char* gpu, std::int64_t gpus, double nvme_tb) {
  Cluster c = make_cluster(find_gpu(gpu), gpus);
  c.gpu.host.memory_gib = 1024;
  c.gpu.host.link_gbps = 25;
  c.gpu.host.cpu_adam_gparams_per_s = 1;
  c.gpu.host.nvme_tb = nvme_tb;
  c.gpu.host.nvme_gbps = nvme_tb > 0 ? 25 : 0;
  return c;
}

Plan offloading(TrainingFramework f, OptimizerSharding zero, StatePlacement where) {
  Plan p;
  p.framework = f;
  p.zero = zero;
  p.offload = where;
  return p;
}

constexpr MemoryTier kGpu = MemoryTier::gpu, kCpu = MemoryTier::cpu, kNvme = MemoryTier::nvme;

TEST(MemoryTiers, NamesRoundTripAndBadNamesNameTheKey) {
  for (MemoryTier t : {kGpu, kCpu, kNvme}) EXPECT_EQ(parse_memory_tier("offload_params", to_string(t)), t);
  EXPECT_EQ(parse_memory_tier("offload_params", "none"), kGpu);
  EXPECT_EQ(thrown_field([] { parse_memory_tier("offload_params", "disk"); }), "offload_params");
}

TEST(MemoryTiers, ATierTheNodesLackIsRefusedNamingTheKey) {
  const Cluster no_nvme = with_host("a100-sxm-80gb", 8, 0);
  const Plan nvme = offloading(TrainingFramework::deepspeed, OptimizerSharding::zero3, {kNvme, kGpu, kGpu});
  EXPECT_EQ(thrown_field([&] { check_offload(nvme, no_nvme); }), "offload_optimizer");
  EXPECT_EQ(thrown_field([&] { check_offload(nvme, with_host("a100-sxm-80gb", 8, 15)); }), "<no error>");
  Cluster no_host = make_cluster(find_gpu("a100-sxm-80gb"), 8);
  no_host.gpu.host = {};
  const Plan cpu = offloading(TrainingFramework::deepspeed, OptimizerSharding::zero1, {kCpu, kGpu, kGpu});
  EXPECT_EQ(thrown_field([&] { check_offload(cpu, no_host); }), "offload_optimizer");
}

TEST(MemoryTiers, EachFrameworkOffloadsOnlyWhatItCan) {
  const Cluster c = with_host("a100-sxm-80gb", 8, 15);
  // DeepSpeed: parameters and NVMe only under ZeRO-3; activation checkpoints need full recompute.
  EXPECT_EQ(thrown_field([&] { check_offload(offloading(TrainingFramework::deepspeed, OptimizerSharding::zero2, {kGpu, kCpu, kGpu}), c); }),
            "offload_params");
  EXPECT_EQ(thrown_field([&] { check_offload(offloading(TrainingFramework::deepspeed, OptimizerSharding::zero2, {kNvme, kGpu, kGpu}), c); }),
            "offload_optimizer");
  EXPECT_EQ(thrown_field([&] { check_offload(offloading(TrainingFramework::deepspeed, OptimizerSharding::zero1, {kGpu, kGpu, kCpu}), c); }),
            "offload_activations");
  // Megatron: no parameter offload, the optimizer to the CPU only, under the distributed optimizer.
  EXPECT_EQ(thrown_field([&] { check_offload(offloading(TrainingFramework::megatron, OptimizerSharding::zero1, {kGpu, kCpu, kGpu}), c); }),
            "offload_params");
  EXPECT_EQ(thrown_field([&] { check_offload(offloading(TrainingFramework::megatron, OptimizerSharding::none, {kCpu, kGpu, kGpu}), c); }),
            "offload_optimizer");
  EXPECT_EQ(thrown_field([&] { check_offload(offloading(TrainingFramework::megatron, OptimizerSharding::zero1, {kCpu, kGpu, kCpu}), c); }),
            "<no error>");
  // FSDP: parameters, gradients and optimizer to the CPU together, sharded.
  EXPECT_EQ(thrown_field([&] { check_offload(offloading(TrainingFramework::torchtitan, OptimizerSharding::zero3, {kCpu, kGpu, kGpu}), c); }),
            "offload_params");
  EXPECT_EQ(thrown_field([&] { check_offload(offloading(TrainingFramework::pytorch, OptimizerSharding::none, {kCpu, kCpu, kGpu}), c); }),
            "offload_params");
  EXPECT_EQ(thrown_field([&] { check_offload(offloading(TrainingFramework::pytorch, OptimizerSharding::zero3, {kCpu, kCpu, kCpu}), c); }),
            "<no error>");
  // No framework pages activations to NVMe.
  EXPECT_EQ(thrown_field([&] { check_offload(offloading(TrainingFramework::deepspeed, OptimizerSharding::zero3, {kGpu, kGpu, kNvme}), c); }),
            "offload_activations");
}

}  // namespace
}  // namespace tessera
