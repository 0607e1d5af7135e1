// Moving a stage's training state out of GPU memory as the plan places it (plan/memory_tiers.h):
// which bytes leave the GPU, which stay behind as staging buffers, and where the moved ones live.
// What each framework keeps on the GPU when it offloads:
// - deepspeed engines: ZeRO-Offload streams each 16-bit gradient bucket to the host as backward
//   produces it, so the GPU holds its reduce buckets (reduce_bucket_size, DeepSpeed's default
//   5e8 elements, runtime/zero/config.py): one, or two with overlap_comm, which the exported
//   config sets without a pipeline (stage_1_and_2.py setup_buckets: cpu_offload forces
//   contiguous_gradients, and overlap_comm adds a second buffer "to avoid data access conflict"); the host holds the fp32 gradient partition beside the
//   fp32 master and Adam's moments (runtime/zero/stage_1_and_2.py single_partition_of_fp32_groups).
//   Parameters offloaded under ZeRO-3 keep only the gathered layers on the GPU; from NVMe they
//   pass through pinned host buffers (offload_param buffer_count 5 x buffer_size 1e8 elements).
// - megatron: --optimizer-cpu-offload moves the distributed optimizer's shard (fp32 master and
//   moments) and a CPU copy of its gradients; the fp32 main-gradient buffer stays on the GPU.
// - FSDP (torchtitan, nemo-automodel, pytorch): CPUOffloadPolicy keeps sharded parameters,
//   their gradients and the optimizer on the host; the GPU holds the gathered units only.
// - activations to cpu: every layer's saved tensors leave once the next layer has run; two layers'
//   worth stay (the one being copied out and, in backward, the one being prefetched back), and so
//   does the working memory of the layer backward recomputes.
#pragma once

#include "cost/estimate.h"
#include "plan/plan.h"

namespace tessera {

// A stage's persistent state on one GPU as if nothing were offloaded, by element counts.
struct ResidentState {
  double optimizer_params = 0;  // parameters whose optimizer state the GPU holds (its shard)
  double activation_layer_bytes = 0;  // one layer's saved activations for one micro-batch
  // Of the activation bytes, those saved for backward (the checkpoints under full recompute): the
  // rest (the layer being recomputed, its working tensors) is computed on the GPU and stays there.
  double saved_activation_bytes = 0;
};

// DeepSpeed's reduce bucket: 5e8 elements (ZERO_OPTIMIZATION_REDUCE_BUCKET_SIZE default) of 16 bits.
inline constexpr double kDeepSpeedReduceBucketBytes = 5e8 * 2.0;
// DeepSpeed's pinned staging for parameters paged from NVMe: buffer_count 5 x buffer_size 1e8
// elements of 16 bits (runtime/zero/offload_config.py DeepSpeedZeroOffloadParamConfig defaults).
inline constexpr double kDeepSpeedParamStagingBytes = 5.0 * 1e8 * 2.0;
// An optimizer on NVMe is stepped one sub-group at a time through pinned host buffers of fp32
// elements: offload_optimizer buffer_count 4 (one per Adam state: parameter, gradient, momentum,
// variance) x a sub-group of at most sub_group_size 1e9 elements (DeepSpeed edaa7221,
// runtime/zero/offload_config.py DeepSpeedZeroOffloadOptimizerConfig, runtime/zero/config.py);
// its fp32 gradients are swapped out to NVMe with the state (stage3.py _swap_out_offload_fp32_gradients).
inline constexpr double kDeepSpeedOptimizerSwapBuffers = 4.0;
inline constexpr double kDeepSpeedSubGroupElements = 1e9;
// Gradient bytes per parameter the host holds beside an offloaded optimizer: the fp32 gradient
// the CPU optimizer step reads.
inline constexpr double kHostGradBytesPerParam = 4.0;
// Layers of activations that stay on the GPU when activations are offloaded.
inline constexpr double kActivationWindowLayers = 2.0;

// DeepSpeed's gradient buckets on the GPU under ZeRO-Offload: 2 with overlap_comm (gradient
// reduce overlapped, no pipeline: export/deepspeed_config.cpp), else 1.
double deepspeed_reduce_buckets(const Plan& p);

// Moves what `p.offload` names from `mem` (GPU bytes) into mem.host_bytes / mem.nvme_bytes.
void move_offloaded_state(MemoryBreakdown& mem, const Plan& p, const ResidentState& state);

}  // namespace tessera
