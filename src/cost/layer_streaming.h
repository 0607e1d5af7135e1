// MegaTrain's layer streaming (framework=megatrain; Yuan et al., arXiv 2604.05091; the code read
// at DLYuanGod/MegaTrain 919520f, infinity/model/cpu_master.py CPUMasterModel): host memory holds
// every parameter and Adam's state, and the GPU is a transient engine that holds one layer at a
// time, double-buffered.
//
// One step of a micro-batch, as _forward_and_backward_single_gpu runs it:
//   forward    each layer's bf16 weights copied in (pinned flat buffer -> GPU flat buffer), the
//              layer run without autograd, its input kept every checkpoint_interval layers;
//   loss       the final norm and lm_head resident on the GPU, the loss over 128-token chunks;
//   backward   per block of checkpoint_interval layers, from the last: the block re-run without
//              autograd (weights copied in again) keeping each layer's output, then each layer
//              re-run with autograd from its input (copied in a third time) and differentiated;
//              its bf16 weight gradients copied out to pinned slabs, added on the CPU.
//   step       Adam on the CPU (DeepSpeed's CPUAdam) over every parameter, then the embedding,
//              norm and head copied back to the GPU.
// So each layer's forward runs three times and its weights cross the host link three times per
// micro-batch, while the gradients cross once the other way (the link is full duplex).
#pragma once

#include "cost/estimate.h"
#include "hardware/gpu_spec.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// Host bytes per parameter: fp32 master weights (4) and Adam's two fp32 moments (8), MegaTrain's
// own sizing rule (scripts/calc_resource.py calc_cpu_memory, "Total: 12 bytes/param"), which is
// the paper's headline: 120B parameters trained with 1.5 TB of host memory (1.44 TB at 12 B).
// The single-GPU code at 919520f also keeps a pinned bf16 copy of every layer (layer_pinned_flats)
// and bf16 gradients, 14 B per parameter with bf16 masters: not what the paper sized.
inline constexpr double kMegatrainHostBytesPerParam = 12.0;
// Layers per checkpointed block: checkpoint_interval's default (examples/sft/configs/README.md,
// scripts/calc_resource.py DEFAULT_CHECKPOINT_INTERVAL).
inline constexpr double kMegatrainCheckpointInterval = 4.0;
// Pinned host slabs for layer gradients awaiting the CPU's accumulation (num_grad_slabs default),
// and the two pinned staging buffers of a layer's weights (cpu_flat_buffers).
inline constexpr double kMegatrainGradSlabs = 12.0;
inline constexpr double kMegatrainHostStagingLayers = 2.0;
// Layer weights on the GPU: two flat buffers and two layer templates the buffers are bound into
// (gpu_flat_buffers, gpu_layer_templates per structure group, double-buffered).
inline constexpr double kMegatrainGpuLayerCopies = 4.0;
// Layer gradients on the GPU: the layer just differentiated and the one whose copy-out is pending.
inline constexpr double kMegatrainGpuGradLayers = 2.0;
// Times each layer's forward runs per micro-batch (forward, block recompute, autograd re-run), and
// so its weights are copied in.
inline constexpr double kMegatrainForwardPasses = 3.0;
// Tokens per chunk of the loss (chunk_size = 128 in the loss loop).
inline constexpr double kMegatrainLossChunkTokens = 128.0;

// Bytes autograd saves per token in one Hugging Face decoder layer whose parameters are bf16 (no
// autocast; transformers modeling_llama.py LlamaRMSNorm upcasts to fp32 inside).
double streamed_layer_saved_bytes_per_token(const ModelSpec& model);
// Parameters of the decoder layers, the ones streamed (the embedding, final norm and head stay).
double streamed_layer_params(const ModelSpec& model);
// GPU and host memory of a MegaTrain step; host_bytes is the node's whole host state.
MemoryBreakdown layer_streaming_memory(const ModelSpec& model, const Plan& plan, const Workload& workload,
                                       const GpuSpec& gpu);

}  // namespace tessera
