// The memory-bound kernels of a plain PyTorch step (framework=pytorch): a Hugging Face
// Llama-style decoder layer in eager mode under torch.autocast(bfloat16) with fp32 parameters.
// Nothing is fused: each RMSNorm is six fp32 kernels, RoPE five per tensor, SiLU and the gate
// product two, the residual adds promote to fp32, and every linear casts its fp32 input to bf16
// (and autocast each fp32 weight, once per autocast region). Counted from transformers
// modeling_llama.py (LlamaRMSNorm, apply_rotary_pos_emb / rotate_half, LlamaMLP,
// LlamaDecoderLayer at 5dd4a635) and ATen's autocast_mode.cpp (cached_cast), per token, in bytes
// read + written. Megatron-Core runs the same work in a few fused Transformer Engine kernels
// (layer_cost.cpp's elementwise terms); here it is a term of its own.
#pragma once

#include "model/model_spec.h"

namespace tessera {

// The widths a layer's eager tensors scale with: hidden, the q and kv projections' outputs, and
// the MLP's intermediate width a token passes through (an MoE layer's top_k experts).
struct EagerLayerWidths {
  double hidden = 0, q = 0, kv = 0, ffn = 0;
};
EagerLayerWidths eager_layer_widths(const ModelSpec& model);
// The fp32 weights of one layer's linears that autocast casts to bf16: the projections and the
// MLP (an MoE layer's routed experts all, as Hugging Face runs every expert's weights).
double eager_layer_cast_params(const ModelSpec& model, bool moe);

// Forward, per token and layer:
//   2 RMSNorms in fp32 (pow, mean, rsqrt, x r, w n)                           2 x 28 h
//   5 casts of a norm output to bf16 for q, k, v, gate, up (read 4, write 2)   5 x 6 h
//   2 residual adds fp32 + bf16 -> fp32                                        2 x 10 h
//   RoPE on q and k (mul by fp32 cos, neg, cat, mul by sin, add: 30 per width) 30 (q + kv)
//   SDPA's casts of the fp32 rotated q, k back to bf16                         6 (q + kv)
//   SiLU (read 2, write 2) and its product with up (read 4, write 2)           10 f
double eager_layer_forward_bytes_per_token(const ModelSpec& model);
// Backward, per token and layer (autograd of each op): the RMSNorms' backward with three
// gradients summed into x (2 x 104 h), the cast backwards of the five linear inputs and their sum
// into the norm outputs (18 h + 24 h + 12 h + 12 h), the residual branches' gradient casts
// (2 x 6 h), RoPE's backward (56 per width) and the SwiGLU's (18 f).
double eager_layer_backward_bytes_per_token(const ModelSpec& model);

// Kernels launched per layer: 33 memory-bound kernels forward (the list above), about twice as
// many backward (autograd adds a kernel per gradient sum and per cast).
inline constexpr double kEagerKernelsPerLayerForward = 33.0;
inline constexpr double kEagerKernelsPerLayerBackward = 70.0;

// Per fp32 weight of a linear layer: autocast's bf16 copy in every forward (read 4, write 2),
// and backward the bf16 weight gradient converted to fp32 (ToCopyBackward: read 2, write 4).
inline constexpr double kEagerWeightCastBytesPerParam = 6.0;
inline constexpr double kEagerGradCastBytesPerParam = 6.0;
// AccumulateGrad into an existing fp32 .grad (micro-batches after the first): read 4 + 4, write 4.
inline constexpr double kEagerGradAccumulateBytesPerParam = 12.0;

// transformers' ForCausalLMLoss over bf16 logits, per logit, forward: logits.float() (read 2,
// write 4) and log_softmax (cunn_SoftMaxForward: a max pass, a sum-of-exp pass and the output pass,
// read 12, write 4; a 128K-entry fp32 row is 0.5 MB, past the shared-memory variant).
inline constexpr double kEagerLossForwardBytesPerLogit = 6.0 + 16.0;
// Backward: nll_loss's zero-filled gradient (write 4); log_softmax's backward, which reads the
// incoming gradient twice (cunn_SoftMaxBackward: an ilpReduce sum pass over gradOutput, then
// gradOutput and the output to write gradInput; aten/src/ATen/native/cuda/SoftMax.cu @ 000cace5:
// read 12, write 4); the cast back to bf16 (read 4, write 2).
inline constexpr double kEagerLossBackwardBytesPerLogit = 4.0 + 16.0 + 6.0;

// torch.optim.AdamW(fused=True) on fp32 parameters: read parameter, gradient and both moments,
// write parameter and both moments (zero_grad(set_to_none=True) frees the gradients: no pass).
inline constexpr double kEagerAdamStepBytesPerParam = 4.0 * 4.0 + 3.0 * 4.0;

}  // namespace tessera
