// Where training state lives when GPU memory is not enough (issue 34): each kind of state on the
// GPU, in the host's memory (reached over PCIe, or NVLink-C2C on GH200-class parts) or on the
// node's local NVMe. What moves together follows the frameworks that do it:
// - optimizer: the fp32 master weights, Adam's two moments and the fp32 gradients the step reads;
//   the optimizer step then runs on the host CPU (ZeRO-Offload, Ren et al. ATC'21 §4: "offload
//   ... gradients, momentum, variance and fp32 parameters to CPU"; DeepSpeed offload_optimizer;
//   Megatron --optimizer-cpu-offload; FSDP2 CPUOffloadPolicy).
// - params: the 16-bit working weights, gathered layer by layer into GPU memory before use
//   (ZeRO-3 with offload_param, ZeRO-Infinity, Rajbhandari et al. SC'21 §5).
// - activations: the activation checkpoints (each recomputed layer's input), copied out after the
//   forward and back before the recompute (DeepSpeed activation_checkpointing.cpu_checkpointing;
//   ZeRO-Infinity §5.1.2 "activation checkpoints offloaded to CPU memory").
#pragma once

#include <string>

namespace tessera {

enum class MemoryTier { gpu, cpu, nvme };

const char* to_string(MemoryTier value);
// "gpu" | "cpu" | "nvme"; `field` names the plan key in the error.
MemoryTier parse_memory_tier(const std::string& field, const std::string& text);

struct StatePlacement {
  MemoryTier optimizer = MemoryTier::gpu;
  MemoryTier params = MemoryTier::gpu;
  MemoryTier activations = MemoryTier::gpu;  // gpu or cpu (no framework pages checkpoints to NVMe)

  bool any_offload() const {
    return optimizer != MemoryTier::gpu || params != MemoryTier::gpu || activations != MemoryTier::gpu;
  }
  bool uses(MemoryTier tier) const { return optimizer == tier || params == tier || activations == tier; }
  bool operator==(const StatePlacement&) const = default;
};

}  // namespace tessera
