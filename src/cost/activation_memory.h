// Activation memory of one transformer layer for one micro-batch on one GPU, after Korthikanti
// et al. 2022, "Reducing Activation Recomputation in Large Transformer Models" (arXiv 2205.05198)
// §4, Table 2. For a GPT layer (MHA, 4h GeLU MLP, dropout, 16-bit) without flash attention:
//   no parallelism          s b h (34 + 5 a s / h)
//   tensor parallel         s b h (10 + 24/t + 5 a s / (h t))
//   tensor + sequence par.  s b h / t (34 + 5 a s / h)
//   selective recompute     drops the 5 a s / h term
//   full recompute          2 s b h (divided by t with sequence parallelism)
// Dropout masks and the attention-dropout output are kept only for a model trained with dropout.
//
// Generalised tensor by tensor, the way Megatron-Core (NVIDIA/Megatron-LM d98e8a64) keeps them:
// - GQA (smaller K and V), QK-norm (the pre-norm Q and K), gated MLPs (gate and up both stored),
//   fused flash attention (no s x s scores; the fp32 softmax log-sum-exp per query and head).
// - MLA exactly (transformer/multi_latent_attention.py): the q and kv latents before and after
//   their norms, the shared rope key, and the up-projected per-head Q, K (nope + rope) and V.
// - MoE layers (transformer/moe/): router scores and routing map on the local tokens, routed
//   token copies received by this rank (tokens x top_k x load factor, all-gathered over the etp
//   ranks), the experts' fc1 input / fc1 output / activation output at width ffn / etp, and the
//   shared experts as a dense MLP split by tp.
// - Megatron --recompute-modules (transformer_config.py): each module drops what its checkpoint
//   no longer keeps (core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts).
// - FP8 (Transformer Engine): a GEMM input kept only for its weight gradient is saved quantized
//   (1 byte plus the recipe's scales); norms, attention and the residual stream stay 16-bit.
// - torchtitan's op-level selective checkpointing (framework = torchtitan): the layer input, the
//   outputs of every other matmul, the flash-attention output and log-sum-exp.
#pragma once

#include <cstdint>

#include "model/flops.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// The training stack (plan.h's TrainingFramework) lays out the saved tensors: selective
// recompute means Megatron's --recompute-modules under megatron and torchtitan's op-level SAC
// (selective_ac_option = "op") under torchtitan, with PyTorch DTensor tensor parallelism.
struct ActivationShape {
  double seq = 0;           // tokens of one sequence on this GPU (s / cp)
  double micro_batch = 0;   // sequences per micro-batch
  std::int64_t tp = 1;
  bool sequence_parallel = false;
  bool flash_attention = true;
  Recompute recompute = Recompute::none;
  // Megatron --recompute-modules bits under recompute = selective (Plan::selective_modules());
  // 0 with selective means Megatron's default, core_attn.
  unsigned recompute_modules = 0;
  // MoE: expert tensor parallelism (0 = tp) and the busiest rank's routed load over the mean
  // (expert_load.h: capacity factor when padded, 1 when balanced).
  std::int64_t etp = 0;
  double expert_load = 1.0;
  // FP8 GEMMs (Precision::fp8) and their scaling recipe.
  bool fp8 = false;
  Fp8Recipe fp8_recipe = Fp8Recipe::tensorwise;
  TrainingFramework framework = TrainingFramework::megatron;
};

// The shape of a plan's layers on one stage (everything but the framework, which the plan does
// not name yet). Allocation-free.
ActivationShape activation_shape(const Plan& plan, const Workload& workload);

// Bytes of a GEMM input saved for the weight gradient: 16-bit, or FP8 plus the recipe's scales.
double saved_gemm_input_bytes(const ActivationShape& shape);

// Bytes kept for backward by one layer (moe = true: an MoE layer).
double layer_activation_bytes(const ModelSpec& model, const ActivationShape& shape, bool moe);

// Routed token copies an MoE layer processes on this rank per micro-batch: the local tokens
// (s b / cp, split over tp by sequence parallelism), all-gathered over the etp ranks, times top_k
// and the load factor.
double routed_tokens_on_rank(const ModelSpec& model, const ActivationShape& shape);

// Transient buffers of one MoE layer's token dispatch (alive while the layer runs, not kept):
// alltoall: the permuted tokens before the exchange; allgather: every token of the ep x etp group;
// flex: DeepEP's fixed NVLink / RDMA buffers.
double moe_dispatch_buffer_bytes(const ModelSpec& model, const ActivationShape& shape,
                                 MoeDispatcher dispatcher, std::int64_t ep);

}  // namespace tessera
