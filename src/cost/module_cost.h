// Time and memory of a multimodal model's non-backbone modules (encoders, projectors, generators)
// on one GPU of the group that runs them: a ViT or DiT layer is a transformer layer with
// bidirectional attention over each item (image, clip, latent), so its time comes from
// layer_cost() over the micro-batch's tokens, with the attention term set by the sum of each
// item's squared length.
#pragma once

#include <cstdint>

#include "cost/estimate.h"
#include "hardware/cluster.h"
#include "model/flops.h"
#include "model/multimodal_spec.h"
#include "plan/data_mix.h"

namespace tessera {

// How a module group runs a module: tensor parallel inside the group, data parallel across it
// (ZeRO-1 optimizer sharding over dp), with or without full recompute.
struct ModulePlan {
  std::int64_t tp = 1;
  std::int64_t dp = 1;
  Recompute recompute = Recompute::none;
  std::int64_t gpus() const { return tp * dp; }
};

struct ModulePass {
  double fwd_s = 0;
  double bwd_s = 0;  // includes the recomputed forward
  // The same without the host-dispatch floor: the time the module adds to a stage whose host
  // thread is already ahead of the GPU (an encoder inside a GPU-bound backbone stage).
  double gpu_fwd_s = 0, gpu_bwd_s = 0;
  double host_fwd_s = 0, host_bwd_s = 0;  // the host's dispatch of the module's operators
  double total() const { return fwd_s + bwd_s; }
};

// Forward and backward of `load` (this GPU's share of a micro-batch) on one GPU of the group.
ModulePass module_pass_time(const ModuleSpec& module, const Cluster& cluster, const ModulePlan& plan,
                            const ModuleLoad& load);

// Per-GPU memory: 16-bit weights and fp32 gradients of the tp shard, the Adam state of its 1/dp
// share, the activations of `inflight` (this GPU's tokens held for backward, over all in-flight
// micro-batches), and the framework's reserve (kFrameworkOverheadBytes plus the GPU's
// memory_reserve_gib, memory_model.h measured_reserve_bytes).
MemoryBreakdown module_memory(const ModuleSpec& module, const ModulePlan& plan, const ModuleLoad& inflight,
                              const GpuSpec& gpu);

// Gradient reduce-scatter + parameter all-gather of the module over its dp group, once per step.
double module_grad_sync_s(const ModuleSpec& module, const Cluster& cluster, const ModulePlan& plan);

}  // namespace tessera
