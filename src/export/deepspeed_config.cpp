#include "export/deepspeed_config.h"

#include <string>

#include <fmt/core.h>

#include "core/error.h"
#include "export/deepspeed_rules.h"

namespace tessera {
namespace {

using json = nlohmann::json;

// Every default below is DeepSpeed edaa7221's (runtime/zero/config.py DeepSpeedZeroConfig,
// runtime/zero/offload_config.py), written out so the file says what runs.
constexpr std::int64_t kReduceBucketElements = 500'000'000;     // reduce_bucket_size pp_int(5e8); cost/offloaded_state.h prices it
constexpr std::int64_t kAllgatherBucketElements = 500'000'000;  // allgather_bucket_size pp_int(5e8)
constexpr std::int64_t kPrefetchBucketElements = 50'000'000;    // stage3_prefetch_bucket_size pp_int(5e7)
constexpr std::int64_t kParamPersistenceElements = 100'000;     // stage3_param_persistence_threshold pp_int(1e5)
constexpr std::int64_t kMaxLiveParameters = 1'000'000'000;      // stage3_max_live_parameters pp_int(1e9)
constexpr std::int64_t kMaxReuseDistance = 1'000'000'000;       // stage3_max_reuse_distance pp_int(1e9)
// offload_param to NVMe: 5 pinned buffers of 1e8 elements, 1e9 elements kept in CPU memory
// (DeepSpeedZeroOffloadParamConfig defaults; cost/offloaded_state.h kDeepSpeedParamStagingBytes).
constexpr std::int64_t kParamBufferCount = 5;
constexpr std::int64_t kParamBufferElements = 100'000'000;
constexpr std::int64_t kParamMaxInCpuElements = 1'000'000'000;
// offload_optimizer to NVMe: 4 buffers, "at least the number of states per parameter" of Adam
// (parameter, gradient, momentum, variance; DeepSpeedZeroOffloadOptimizerConfig.buffer_count).
constexpr std::int64_t kOptimizerBufferCount = 4;
// fp16 dynamic loss scaling (Volta has no BF16): loss_scale 0 = dynamic, starting at 2^16
// (runtime/precision_config.py DeepSpeedFP16Config defaults).
constexpr int kInitialScalePower = 16;
// The schedule placeholders of Tessera's Megatron launch script (export/megatron_launch.cpp
// SCHEDULE_ARGS: lr 3e-4, Adam betas 0.9 / 0.95, weight decay 0.1, --clip-grad 1.0); eps is
// AdamW's default (torch.optim.AdamW and DeepSpeed's FusedAdam / DeepSpeedCPUAdam: 1e-8).
constexpr double kLearningRate = 3.0e-4;
constexpr double kAdamBeta1 = 0.9, kAdamBeta2 = 0.95, kAdamEps = 1e-8;
constexpr double kWeightDecay = 0.1;
constexpr double kGradientClipping = 1.0;

// ---- what DeepSpeed cannot express ----------------------------------------------------------

void check_parallelism(const Plan& p) {
  if (p.cp > 1)
    throw Error("cp", "DeepSpeed has no ring context parallelism (its sequence parallelism is Ulysses, over heads)", "cp=1");
  if (p.ep > 1)
    throw Error("ep", "DeepSpeed's expert parallelism is set in the model code (deepspeed.moe.layer.MoE ep_size), not the config",
                "ep=1");
  if (p.precision == Precision::fp8)
    throw Error("precision", "a DeepSpeed config has no FP8 training mode", "bf16");
  // runtime/pipe/engine.py PipelineEngine.__init__ asserts stage < 2.
  if (p.pp > 1 && (p.zero == OptimizerSharding::zero2 || p.zero == OptimizerSharding::zero3))
    throw Error("zero", "DeepSpeed's pipeline engine refuses ZeRO-2 and ZeRO-3", "zero=0 or 1 with pp > 1");
  // ZeRO-3 re-partitions each module's parameters after use; no switch keeps them gathered for the backward.
  if (p.zero == OptimizerSharding::zero3 && !p.reshard_after_forward)
    throw Error("reshard_after_forward", "DeepSpeed ZeRO-3 releases parameters after each forward module", "1");
}

// runtime/zero: offload_param only under stage 3, optimizer state to NVMe only under stage 3
// (stage_1_and_2.py treats nvme as cpu), CPU Adam needs a ZeRO optimizer to move state to the
// host; activation_checkpointing.cpu_checkpointing moves only checkpoints (recompute = full).
void check_offload(const Plan& p) {
  const StatePlacement& o = p.offload;
  const bool zero3 = p.zero == OptimizerSharding::zero3;
  if (o.params != MemoryTier::gpu && !zero3)
    throw Error("offload_params", "DeepSpeed offloads parameters only under ZeRO-3 (offload_param)", "gpu, or zero=3");
  if (o.optimizer != MemoryTier::gpu && p.zero == OptimizerSharding::none)
    throw Error("offload_optimizer", "DeepSpeed's CPU Adam needs a ZeRO optimizer to move the state to the host",
                "gpu, or zero >= 1");
  if (o.optimizer == MemoryTier::nvme && !zero3)
    throw Error("offload_optimizer", "DeepSpeed swaps optimizer state to NVMe only under ZeRO-3 (ZeRO-Infinity)",
                "gpu, cpu, or zero=3 for nvme");
  if (o.activations == MemoryTier::nvme)
    throw Error("offload_activations", "DeepSpeed moves activation checkpoints to CPU memory only", "gpu, cpu");
  if (o.activations == MemoryTier::cpu && p.recompute != Recompute::full)
    throw Error("offload_activations", "DeepSpeed's cpu_checkpointing moves activation checkpoints: needs recompute=full",
                "gpu, or recompute=full");
}

// ---- the sections ----------------------------------------------------------------------------

const char* device(MemoryTier tier) { return tier == MemoryTier::gpu ? "none" : to_string(tier); }

json offload_optimizer(MemoryTier tier) {
  json o = {{"device", device(tier)}, {"pin_memory", true}};
  if (tier == MemoryTier::nvme) {
    o["nvme_path"] = kDeepSpeedNvmePlaceholder;
    o["buffer_count"] = kOptimizerBufferCount;
  }
  return o;
}

json offload_param(MemoryTier tier) {
  json o = {{"device", device(tier)}, {"pin_memory", true}};
  if (tier == MemoryTier::nvme) {
    o["nvme_path"] = kDeepSpeedNvmePlaceholder;
    o["buffer_count"] = kParamBufferCount;
    o["buffer_size"] = kParamBufferElements;
    o["max_in_cpu"] = kParamMaxInCpuElements;
  }
  return o;
}

int stage(OptimizerSharding zero) {
  switch (zero) {
    case OptimizerSharding::none: return 0;
    case OptimizerSharding::zero1: return 1;
    case OptimizerSharding::zero2: return 2;
    case OptimizerSharding::zero3: return 3;
  }
  return 0;
}

json zero_section(const Plan& p) {
  json z = {{"stage", stage(p.zero)}};
  if (p.zero == OptimizerSharding::none) return z;
  // The pipeline engine turns overlap_comm off itself (engine.py _configure_zero_optimizer warns);
  // it is written as it runs, which is how the cost model prices it (plan.h as_run_by_framework).
  z["overlap_comm"] = p.overlap_grad_reduce && p.pp == 1;
  z["contiguous_gradients"] = true;
  z["reduce_scatter"] = true;
  z["reduce_bucket_size"] = kReduceBucketElements;
  z["allgather_bucket_size"] = kAllgatherBucketElements;
  if (p.zero == OptimizerSharding::zero3) {
    z["stage3_prefetch_bucket_size"] = kPrefetchBucketElements;
    z["stage3_param_persistence_threshold"] = kParamPersistenceElements;
    z["stage3_max_live_parameters"] = kMaxLiveParameters;
    z["stage3_max_reuse_distance"] = kMaxReuseDistance;
    // save_16bit_model() writes whole weights only when they are gathered on save (zero/config.py).
    z["stage3_gather_16bit_weights_on_model_save"] = true;
  }
  if (p.offload.optimizer != MemoryTier::gpu) z["offload_optimizer"] = offload_optimizer(p.offload.optimizer);
  if (p.offload.params != MemoryTier::gpu) z["offload_param"] = offload_param(p.offload.params);
  return z;
}

// Checkpoints are kept whole on every tensor-parallel rank (partition_activations off), as the
// cost model's activation memory counts them (cost/activation_memory).
json activation_checkpointing(const Plan& p) {
  return {{"partition_activations", false},
          {"cpu_checkpointing", p.offload.activations == MemoryTier::cpu},
          {"contiguous_memory_optimization", false},
          {"synchronize_checkpoint_boundary", false},
          {"profile", false}};
}

// "AdamW": with offload_optimizer cpu / nvme the engine builds DeepSpeedCPUAdam for it, otherwise
// FusedAdam (engine.py _configure_basic_optimizer); both in AdamW mode.
json optimizer() {
  return {{"type", "AdamW"},
          {"params", {{"lr", kLearningRate}, {"betas", {kAdamBeta1, kAdamBeta2}}, {"eps", kAdamEps}, {"weight_decay", kWeightDecay}}}};
}

// Volta has no BF16 (DeepSpeed's engine refuses bf16 there): fp16 with dynamic loss scaling.
bool bf16_device(const Cluster& c) { return c.gpu.family != "volta"; }

void add_precision(json& ds, const Cluster& c) {
  if (bf16_device(c)) {
    ds["bf16"] = {{"enabled", true}};
  } else {
    ds["fp16"] = {{"enabled", true}, {"loss_scale", 0}, {"initial_scale_power", kInitialScalePower}};
  }
}

std::int64_t accumulation_steps(const Plan& p, const Workload& w) {
  const std::int64_t per_step = p.micro_batch * p.dp;
  if (per_step <= 0 || w.global_batch % per_step != 0)
    throw Error("gbs", fmt::format("{} sequences do not split into micro-batches of {} over {} data-parallel ranks",
                                   w.global_batch, p.micro_batch, p.dp),
                "a multiple of micro_batch x dp");
  return w.global_batch / per_step;
}

void require_deepspeed_accepts(const json& ds, const Plan& p, const Cluster& c) {
  const auto broken = deepspeed_violations(ds, {p.dp, p.pp, bf16_device(c)});
  if (broken.empty()) return;
  throw Error("deepspeed", fmt::format("DeepSpeed would refuse this config: rule {} ({}): {}", broken.front()->id,
                                       broken.front()->source, broken.front()->message),
              "a plan DeepSpeed accepts");
}

}  // namespace

json deepspeed_config(const ModelSpec&, const Plan& p, const Workload& w, const Cluster& c) {
  check_parallelism(p);
  check_offload(p);
  json ds;
  ds["train_batch_size"] = w.global_batch;
  ds["train_micro_batch_size_per_gpu"] = p.micro_batch;
  ds["gradient_accumulation_steps"] = accumulation_steps(p, w);
  add_precision(ds, c);
  ds["zero_optimization"] = zero_section(p);
  if (p.recompute == Recompute::full) ds["activation_checkpointing"] = activation_checkpointing(p);
  // Megatron-DeepSpeed's tensor parallelism is its own launch argument; plain DeepSpeed's is AutoTP.
  if (p.tp > 1 && p.framework != TrainingFramework::megatron_deepspeed) ds["tensor_parallel"] = {{"autotp_size", p.tp}};
  ds["gradient_clipping"] = kGradientClipping;
  ds["optimizer"] = optimizer();
  require_deepspeed_accepts(ds, p, c);
  return ds;
}

}  // namespace tessera
