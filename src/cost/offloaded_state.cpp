#include "cost/offloaded_state.h"

#include <algorithm>

#include "core/units.h"

namespace tessera {

namespace {
void add_to(MemoryBreakdown& mem, MemoryTier tier, double bytes) {
  if (tier == MemoryTier::cpu) mem.host_bytes += bytes;
  if (tier == MemoryTier::nvme) mem.nvme_bytes += bytes;
}

void move_optimizer(MemoryBreakdown& mem, const Plan& p, const ResidentState& s) {
  const MemoryTier tier = p.offload.optimizer;
  add_to(mem, tier, mem.optimizer_bytes);
  mem.optimizer_bytes = 0;
  // The fp32 gradients the CPU step reads: in host memory, or swapped out to NVMe beside the
  // optimizer state, which then passes through the swapper's pinned sub-group buffers.
  if (tier == MemoryTier::nvme) {
    mem.nvme_bytes += kHostGradBytesPerParam * s.optimizer_params;
    mem.host_bytes += kDeepSpeedOptimizerSwapBuffers * std::min(s.optimizer_params, kDeepSpeedSubGroupElements) * units::kBytesFp32;
  } else {
    mem.host_bytes += kHostGradBytesPerParam * s.optimizer_params;
  }
  if (deepspeed_engine(p.framework)) {
    mem.gradients_bytes = std::min(mem.gradients_bytes, deepspeed_reduce_buckets(p) * kDeepSpeedReduceBucketBytes);
  } else if (p.framework != TrainingFramework::megatron) {
    mem.gradients_bytes = 0;  // FSDP's sharded gradients are moved to the host with the parameters
  }
}

void move_params(MemoryBreakdown& mem, const Plan& p) {
  const MemoryTier tier = p.offload.params;
  add_to(mem, tier, mem.weights_bytes);
  mem.weights_bytes = 0;
  if (tier == MemoryTier::nvme) mem.host_bytes += kDeepSpeedParamStagingBytes;
}

void move_activations(MemoryBreakdown& mem, const ResidentState& s) {
  const double saved = std::min(mem.activations_bytes, s.saved_activation_bytes);
  const double window = std::min(saved, kActivationWindowLayers * s.activation_layer_bytes);
  mem.host_bytes += saved - window;
  mem.activations_bytes -= saved - window;
}
}  // namespace

double deepspeed_reduce_buckets(const Plan& p) { return p.overlap_grad_reduce && p.pp == 1 ? 2.0 : 1.0; }

void move_offloaded_state(MemoryBreakdown& mem, const Plan& p, const ResidentState& s) {
  if (p.offload.optimizer != MemoryTier::gpu) move_optimizer(mem, p, s);
  if (p.offload.params != MemoryTier::gpu) move_params(mem, p);
  if (p.offload.activations != MemoryTier::gpu) move_activations(mem, s);
}

}  // namespace tessera
