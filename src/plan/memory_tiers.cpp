#include "plan/memory_tiers.h"

#include <string>
#include <utility>

#include "core/error.h"
#include "plan/plan.h"

namespace tessera {

const char* to_string(MemoryTier value) {
  switch (value) {
    case MemoryTier::gpu: return "gpu";
    case MemoryTier::cpu: return "cpu";
    case MemoryTier::nvme: return "nvme";
  }
  return "?";
}

MemoryTier parse_memory_tier(const std::string& field, const std::string& text) {
  if (text == "gpu" || text == "none") return MemoryTier::gpu;
  if (text == "cpu") return MemoryTier::cpu;
  if (text == "nvme") return MemoryTier::nvme;
  throw Error(field, "unknown tier '" + text + "'", "gpu (or none), cpu, nvme");
}


// What each framework can move out of GPU memory, and whether the cluster's nodes have the tier:
// the offload part of validate_plan (plan.h check_offload).

namespace {
// Megatron-LM's own refusals of offload combinations (arguments.py validate_args, d98e8a64):
// --cpu-offloading-num-layers runs on one pipeline stage without activation recomputation, and
// the CPU optimizer with FP8 parameter gather needs the delayed recipe.
void check_megatron_offload_combinations(const Plan& p) {
  if (p.offload.activations == MemoryTier::cpu && p.pp != 1)
    throw Error("offload_activations", "Megatron-LM's activation offload does not run with pipeline parallelism",
                "gpu, or pp=1");
  if (p.offload.activations == MemoryTier::cpu && p.recompute != Recompute::none)
    throw Error("offload_activations", "Megatron-LM's activation offload does not run with activation recomputation",
                "gpu, or recompute=none");
  if (p.offload.optimizer == MemoryTier::cpu && p.precision == Precision::fp8 && p.fp8_param_gather &&
      p.fp8_recipe != Fp8Recipe::delayed)
    throw Error("fp8_param_gather", "Megatron's CPU optimizer offload with FP8 parameter gather needs the delayed recipe",
                "fp8_param_gather=0, fp8_recipe=delayed, or offload_optimizer=gpu");
}

// Which state each framework can move out of GPU memory (plan/memory_tiers.h):
// - megatron: the optimizer to the CPU (--optimizer-cpu-offload: HybridDeviceOptimizer over the
//   distributed optimizer's shard, so zero >= 1) and activations (--cpu-offloading-num-layers, Transformer
//   Engine's activation offload); no parameter offload, no NVMe.
// - deepspeed, megatron-deepspeed: ZeRO-Offload (optimizer to CPU, zero >= 1) and ZeRO-Infinity
//   (optimizer or parameters to CPU or NVMe; parameters and NVMe only under ZeRO-3), activation
//   checkpoints to the CPU (activation_checkpointing.cpu_checkpointing: only the checkpoints, so
//   recompute=full).
// - torchtitan, nemo-automodel, pytorch: FSDP's CPU offload (FSDP2 CPUOffloadPolicy, FSDP1
//   CPUOffload(offload_params=True)) moves the sharded parameters, their gradients and the
//   optimizer step to the CPU together, so optimizer and params both cpu, under zero3; a plain
//   loop can keep saved activations in host memory (torch.autograd.graph.save_on_cpu).
// - megatrain: parameters and the optimizer live in host memory by design (both cpu), activations
//   on the GPU.
void check_offload_support(const Plan& p) {
  const StatePlacement& o = p.offload;
  const std::string name = std::string("framework ") + to_string(p.framework);
  if (o.activations == MemoryTier::nvme)
    throw Error("offload_activations", "no framework pages activations to NVMe", "gpu, cpu");
  if (p.framework == TrainingFramework::megatrain) {
    if (o.optimizer != MemoryTier::cpu || o.params != MemoryTier::cpu)
      throw Error(o.optimizer != MemoryTier::cpu ? "offload_optimizer" : "offload_params",
                  name + " keeps parameters and the optimizer in host memory and streams layers to the GPU",
                  "offload_optimizer=cpu with offload_params=cpu");
    if (o.activations != MemoryTier::gpu)
      throw Error("offload_activations", name + " keeps its activation checkpoints on the GPU", "gpu");
    return;
  }
  if (p.framework == TrainingFramework::megatron) {
    if (o.params != MemoryTier::gpu)
      throw Error("offload_params", name + " keeps parameters in GPU memory", "gpu, or framework deepspeed");
    if (o.optimizer == MemoryTier::nvme)
      throw Error("offload_optimizer", name + " offloads the optimizer to the CPU only (--optimizer-cpu-offload)",
                  "gpu, cpu, or framework deepspeed for nvme");
    check_megatron_offload_combinations(p);
  } else if (deepspeed_engine(p.framework)) {
    const bool zero3 = p.zero == OptimizerSharding::zero3;
    if (o.params != MemoryTier::gpu && !zero3)
      throw Error("offload_params", "DeepSpeed offloads parameters only under ZeRO-3 (offload_param)", "gpu, or zero=3");
    if (o.optimizer == MemoryTier::nvme && !zero3)
      throw Error("offload_optimizer", "DeepSpeed offloads the optimizer to NVMe only under ZeRO-3 (ZeRO-Infinity)",
                  "gpu, cpu, or zero=3 for nvme");
    if (o.activations == MemoryTier::cpu && p.recompute != Recompute::full)
      throw Error("offload_activations", "DeepSpeed's cpu_checkpointing moves activation checkpoints: needs recompute=full",
                  "gpu, or recompute=full");
  } else {
    const bool fsdp_offload = o.optimizer != MemoryTier::gpu || o.params != MemoryTier::gpu;
    if (fsdp_offload && (o.optimizer != MemoryTier::cpu || o.params != MemoryTier::cpu))
      throw Error(o.optimizer == MemoryTier::cpu ? "offload_params" : "offload_optimizer",
                  name + " offloads with FSDP's CPUOffloadPolicy: parameters, gradients and optimizer to the CPU together",
                  "offload_optimizer=cpu with offload_params=cpu, or both gpu");
    if (fsdp_offload && p.zero != OptimizerSharding::zero3)
      throw Error("offload_params", name + " offloads FSDP-sharded parameters only", "zero=3 with CPU offload");
    if (o.activations == MemoryTier::cpu && p.framework != TrainingFramework::pytorch)
      throw Error("offload_activations", name + " has no activation offload", "gpu, or framework pytorch / megatron / deepspeed");
  }
  if (o.optimizer != MemoryTier::gpu && p.zero == OptimizerSharding::none && p.framework != TrainingFramework::pytorch &&
      !fsdp2_framework(p.framework))
    throw Error("offload_optimizer", name + " offloads the sharded optimizer (distributed optimizer / ZeRO)",
                "gpu, or zero >= 1");
}

// The tiers the plan uses must exist on the cluster's nodes (hardware/host_spec.h).
void check_offload_tiers(const Plan& p, const Cluster& c) {
  const HostSpec& h = c.gpu.host;
  const std::pair<const char*, MemoryTier> uses[] = {{"offload_optimizer", p.offload.optimizer},
                                                     {"offload_params", p.offload.params},
                                                     {"offload_activations", p.offload.activations}};
  for (const auto& [key, tier] : uses) {
    if (tier == MemoryTier::cpu && !h.has_cpu_tier())
      throw Error(key, "the cluster's host memory, host link or CPU Adam rate is unknown for " + c.gpu.key,
                  "gpu, or a cluster JSON with host.memory_gib, host.link_gbps and host.cpu_adam_gparams_per_s");
    if (tier == MemoryTier::nvme && !h.has_nvme_tier())
      throw Error(key, "the cluster's nodes have no NVMe (" + c.gpu.key + ")",
                  "gpu, cpu, or a cluster JSON with host.nvme_tb and host.nvme_gbps");
    if (tier == MemoryTier::nvme && !h.has_cpu_tier())
      throw Error(key, "NVMe offload stages through host memory, which is unknown for " + c.gpu.key,
                  "gpu, or a cluster JSON with host.memory_gib and host.link_gbps");
  }
}

}  // namespace

void check_offload(const Plan& p, const Cluster& c) {
  check_offload_support(p);
  check_offload_tiers(p, c);
}

}  // namespace tessera
