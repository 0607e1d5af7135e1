// Peak memory of a plain PyTorch training step (framework=pytorch): a Hugging Face causal LM in
// eager mode, fp32 parameters, torch.autocast(bfloat16), fused AdamW, optional gradient
// checkpointing of every decoder layer, the loss of transformers' ForCausalLMLoss. Every term is
// a tensor that PyTorch holds, sized from the model (sources in eager_pytorch_memory.cpp), so the
// allocated peak is the largest of four moments of the step:
//   forward end   the loss's forward: every saved activation, every bf16 weight copy the
//                 autocast cache holds, the bf16 logits, their fp32 copy and the fp32 log-probs;
//   loss backward log_softmax's backward: the log-probs, the incoming and outgoing fp32 gradients
//                 (the autocast cache was cleared when the autocast region exited; without
//                 checkpointing, the bf16 weights stay saved by the matmuls);
//   layer 0       with checkpointing, the first layer's recompute near the end of backward, beside
//                 almost every gradient;
//   backward end  every fp32 gradient (16 B per parameter of state), plus a tied embedding's
//                 second dense gradient.
// Gradient accumulation keeps the gradients of the earlier micro-batches through the later ones.
#pragma once

#include "cost/estimate.h"
#include "hardware/gpu_spec.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// The peak moment's breakdown: weights = fp32 parameters + the bf16 copies alive then; gradients
// = fp32 gradients alive (+ DDP's buckets); optimizer = Adam's moments; activations = saved layer
// tensors; logits = the final norm and head inputs + the tokens x vocab tensors; framework = the
// runtime reserve and the allocator's fragmentation.
MemoryBreakdown eager_pytorch_memory(const ModelSpec& model, const Plan& plan, const Workload& workload,
                                     const GpuSpec& gpu);

// Bytes autograd saves per token in one decoder layer without checkpointing (see the .cpp).
double eager_layer_saved_bytes_per_token(const ModelSpec& model);
// Every decoder layer's saved tensors of one micro-batch (with checkpointing, the layers' inputs).
double eager_activation_bytes_per_microbatch(const ModelSpec& model, const Plan& plan, const Workload& workload);

}  // namespace tessera
