// Non-backbone module costs: closed forms for the projector, what a frozen module skips, and how
// encoder time responds to tokens, item length and sharding.
#include <gtest/gtest.h>

#include "common/builtin_modules.h"

#include "catalog/gpu_catalog.h"
#include "core/units.h"
#include "cost/compute_cost.h"
#include "cost/memory_model.h"
#include "cost/module_cost.h"
#include "formats/multimodal_json.h"

namespace tessera {
namespace {

using testing::builtin_module;

const Cluster& h100() {
  static const Cluster c = load_cluster("h100-sxm-80gb:8");
  return c;
}

// A projector is its GEMMs: forward = sum of (tokens x out x in) GEMMs, backward twice that.
TEST(ModuleCost, ProjectorIsItsGemms) {
  const ModuleSpec& proj = builtin_module("llava-1.5-7b", "projector");
  const ModuleLoad load{5760, 5760.0 * 576, 10, 576};
  const ModulePass pass = module_pass_time(proj, h100(), ModulePlan{}, load);
  const double fwd = gemm_time_s(5760, 4096, 1024, 1, h100().gpu, false) + gemm_time_s(5760, 4096, 4096, 1, h100().gpu, false);
  EXPECT_DOUBLE_EQ(pass.fwd_s, fwd);
  EXPECT_DOUBLE_EQ(pass.bwd_s, 2.0 * fwd);
}

// LLaVA-1.5 keeps CLIP frozen: forward only, no gradients, optimizer state or activations.
TEST(ModuleCost, FrozenEncoderRunsForwardOnlyAndHoldsOnlyWeights) {
  const ModuleSpec& clip = builtin_module("llava-1.5-7b", "clip-vit-l-14-336");
  ASSERT_FALSE(clip.trainable);
  const ModuleLoad load{5760, 10 * 576.0 * 576, 10, 576};
  const ModulePass pass = module_pass_time(clip, h100(), ModulePlan{}, load);
  EXPECT_GT(pass.fwd_s, 0);
  EXPECT_EQ(pass.bwd_s, 0);
  const MemoryBreakdown mem = module_memory(clip, ModulePlan{}, load, GpuSpec{});
  EXPECT_DOUBLE_EQ(mem.weights_bytes, kWeightBytesPerParam * module_parameters(clip));
  EXPECT_EQ(mem.gradients_bytes + mem.optimizer_bytes + mem.activations_bytes, 0);
  EXPECT_EQ(module_grad_sync_s(clip, h100(), ModulePlan{1, 8, Recompute::none}), 0);
}

// Large GPU-bound batches: twice the images take about twice the time; the same tokens in longer
// images take longer (attention is quadratic per image).
TEST(ModuleCost, EncoderTimeFollowsTokensAndItemLength) {
  const ModuleSpec& vit = builtin_module("mllm-72b-gen", "vit-h-14");
  const ModuleLoad one{64 * 576.0, 64 * 576.0 * 576, 64, 576};
  const ModuleLoad two{128 * 576.0, 128 * 576.0 * 576, 128, 576};
  const double t1 = module_pass_time(vit, h100(), ModulePlan{}, one).total();
  const double t2 = module_pass_time(vit, h100(), ModulePlan{}, two).total();
  EXPECT_NEAR(t2 / t1, 2.0, 0.1);
  const ModuleLoad long_items{64 * 576.0, 16 * 2304.0 * 2304, 16, 2304};
  EXPECT_GT(module_pass_time(vit, h100(), ModulePlan{}, long_items).total(), t1);
}

// Full recompute re-runs the forward inside backward and keeps only layer inputs.
TEST(ModuleCost, RecomputeTradesTimeForActivationMemory) {
  const ModuleSpec& vit = builtin_module("mllm-72b-gen", "vit-h-14");
  const ModuleLoad load{16 * 576.0, 16 * 576.0 * 576, 16, 576};
  const ModulePass plain = module_pass_time(vit, h100(), ModulePlan{1, 1, Recompute::none}, load);
  const ModulePass full = module_pass_time(vit, h100(), ModulePlan{1, 1, Recompute::full}, load);
  EXPECT_NEAR(full.bwd_s - plain.bwd_s, plain.fwd_s, 1e-12);
  const double a_plain = module_memory(vit, ModulePlan{1, 1, Recompute::none}, load, GpuSpec{}).activations_bytes;
  const double a_full = module_memory(vit, ModulePlan{1, 1, Recompute::full}, load, GpuSpec{}).activations_bytes;
  // Full recompute keeps each layer's 16-bit input: 2 h bytes per token per layer.
  EXPECT_DOUBLE_EQ(a_full, 2.0 * 1280 * load.tokens * 32);
  EXPECT_GT(a_plain, 10 * a_full);
}

// ZeRO-1 over the module's dp group shards the Adam state; tp shards everything.
TEST(ModuleCost, OptimizerStateShardsOverDataParallel) {
  const ModuleSpec& dit = builtin_module("mllm-72b-gen", "dit-xl-2");
  const double one = module_memory(dit, ModulePlan{1, 1, Recompute::none}, {}, GpuSpec{}).optimizer_bytes;
  EXPECT_DOUBLE_EQ(module_memory(dit, ModulePlan{1, 4, Recompute::none}, {}, GpuSpec{}).optimizer_bytes, one / 4);
  EXPECT_DOUBLE_EQ(module_memory(dit, ModulePlan{2, 1, Recompute::none}, {}, GpuSpec{}).weights_bytes,
                   module_memory(dit, ModulePlan{1, 1, Recompute::none}, {}, GpuSpec{}).weights_bytes / 2);
}

// The GPU's memory_reserve_gib adds to a module's reserve and nothing else.
TEST(ModuleCost, MeasuredReserveAddsToTheModuleReserve) {
  const ModuleSpec& vit = builtin_module("mllm-72b-gen", "vit-h-14");
  const ModuleLoad load{16 * 576.0, 16 * 576.0 * 576, 16, 576};
  GpuSpec calibrated = h100().gpu;
  calibrated.memory_reserve_gib = 3.0;
  const MemoryBreakdown a = module_memory(vit, ModulePlan{}, load, h100().gpu);
  const MemoryBreakdown b = module_memory(vit, ModulePlan{}, load, calibrated);
  EXPECT_DOUBLE_EQ(a.framework_bytes, kFrameworkOverheadBytes);
  EXPECT_DOUBLE_EQ(b.framework_bytes - a.framework_bytes, 3.0 * units::kGiB);
  EXPECT_EQ(b.weights_bytes + b.gradients_bytes + b.optimizer_bytes + b.activations_bytes,
            a.weights_bytes + a.gradients_bytes + a.optimizer_bytes + a.activations_bytes);
}

}  // namespace
}  // namespace tessera
