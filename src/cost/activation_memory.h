// Activation memory of one transformer layer for one micro-batch on one GPU, after Korthikanti
// et al. 2022, "Reducing Activation Recomputation in Large Transformer Models" (arXiv 2205.05198)
// §4, Table 2. For a GPT layer (MHA, 4h GeLU MLP, dropout, 16-bit) without flash attention:
//   no parallelism          s b h (34 + 5 a s / h)
//   tensor parallel         s b h (10 + 24/t + 5 a s / (h t))
//   tensor + sequence par.  s b h / t (34 + 5 a s / h)
//   selective recompute     drops the 5 a s / h term
//   full recompute          2 s b h (divided by t with sequence parallelism)
// Dropout masks and the attention-dropout output are kept only for a model trained with dropout.
// Generalised term by term for GQA (smaller K and V), gated MLPs (gate and up both stored), MoE
// (top_k expert MLPs per token) and fused flash attention (no s x s scores; only the softmax
// log-sum-exp in fp32).
#pragma once

#include <cstdint>

#include "model/flops.h"
#include "model/model_spec.h"

namespace tessera {

struct ActivationShape {
  double seq = 0;           // tokens of one sequence on this GPU (s / cp)
  double micro_batch = 0;   // sequences per micro-batch
  std::int64_t tp = 1;
  bool sequence_parallel = false;
  bool flash_attention = true;
  Recompute recompute = Recompute::none;
};

// Bytes kept for backward by one layer (moe = true: an MoE layer).
double layer_activation_bytes(const ModelSpec& model, const ActivationShape& shape, bool moe);

}  // namespace tessera
