#include "cost/embedding_head_cost.h"

#include "cost/adapter_cost.h"
#include "cost/compute_cost.h"
#include "cost/eager_kernels.h"
#include "core/units.h"

namespace tessera {

namespace {
// Cross-entropy over fp32 logits as Megatron-LM's vocab-parallel loss runs it in separate
// PyTorch ops (core/tensor_parallel/cross_entropy.py, r0.8): transpose, upcast, max, subtract,
// exp, sum, divide forward (~42 bytes per logit); softmax-minus-one-hot, scale, downcast,
// transpose backward (~26 bytes).
constexpr double kLossBytesPerLogit = 68.0;
// Megatron-Core DDP's backward hook adds a 16-bit param.grad into the fp32 main_grad
// (distributed_data_parallel.py @ d98e8a64, `param.main_grad.add_(param.grad.data)`): read 2 and
// 4, write 4 bytes per element.
constexpr double kMainGradAddBytes = 10.0;
// Plain PyTorch with tied embeddings: autograd sums the lm_head's and the embedding's fp32
// gradients of the one weight before AccumulateGrad (read 4 + 4, write 4).
constexpr double kEagerTiedGradientSumBytes = 12.0;
}  // namespace

double dense_embedding_gradient_bytes_per_element(TrainingFramework framework, bool tied) {
  switch (framework) {
    case TrainingFramework::pytorch:
      return units::kBytesFp32 + (tied ? kEagerTiedGradientSumBytes : 0.0);
    case TrainingFramework::megatron:
      return units::kBytesBf16 + kMainGradAddBytes;
    default:
      return units::kBytesBf16;
  }
}

StageCost embedding_cost(const LayerContext& x, double tp_one_s) {
  StageCost embed;
  const double h = static_cast<double>(x.m.hidden);
  const double vocab_local = static_cast<double>(x.m.vocab) / x.tp;
  const double lookup_s = memory_bound_time_s((units::kBytesBf16 + units::kBytesFp32 * 2.0) * x.tokens * h, x.c.gpu);
  const double dense_gradient_s = memory_bound_time_s(
      dense_embedding_gradient_bytes_per_element(x.p.framework, x.m.tied_embeddings) * vocab_local * h, x.c.gpu);
  embed.compute_s = lookup_s + dense_gradient_s;
  embed.tp_s = tp_one_s;
  embed.fwd_s = lookup_s / 3.0 + tp_one_s;
  embed.bwd_s = lookup_s * 2.0 / 3.0 + dense_gradient_s;
  return embed;
}

namespace {
// Forward and backward bytes of the loss per logit: transformers' eager loss (eager_kernels.h) or
// Megatron's, split evenly (its ops are not counted per pass).
struct LossBytes {
  double forward = 0, backward = 0;
};
LossBytes loss_bytes_per_logit(bool eager) {
  if (eager) return {kEagerLossForwardBytesPerLogit, kEagerLossBackwardBytesPerLogit};
  return {kLossBytesPerLogit / 2.0, kLossBytesPerLogit / 2.0};
}
}  // namespace

StageCost output_head_cost(const LayerContext& x, double tp_one_s) {
  StageCost head;
  const double h = static_cast<double>(x.m.hidden);
  const double vocab_local = static_cast<double>(x.m.vocab) / x.tp;
  const double gemm = gemm_time_s(x.tokens, vocab_local, h, 1.0, x.c.gpu, false);
  const bool eager = x.p.framework == TrainingFramework::pytorch;
  const LossBytes per_logit = loss_bytes_per_logit(eager);
  const double logits = x.tokens * vocab_local;
  // Eager PyTorch: autocast's bf16 copy of the fp32 lm_head weight each forward, its gradient cast
  // back. Under PEFT the head is frozen: no weight gradient; QLoRA keeps it in fp32 (cast each
  // forward).
  const bool frozen = x.p.tuning.adapters();
  const double cast_fwd_per_param = frozen && !x.p.tuning.quantized_base() ? 0.0 : kEagerWeightCastBytesPerParam;
  const double cast_bwd_per_param = frozen ? 0.0 : kEagerGradCastBytesPerParam;
  const double head_params = eager ? vocab_local * h : 0.0;
  const double loss_fwd = memory_bound_time_s(per_logit.forward * logits + cast_fwd_per_param * head_params, x.c.gpu);
  const double loss_bwd = memory_bound_time_s(per_logit.backward * logits + cast_bwd_per_param * head_params, x.c.gpu);
  const double gemm_bwd = gemm * (frozen ? kFrozenGemmBackwardOverForward : kGemmBackwardOverForward);
  head.compute_s = gemm + gemm_bwd + loss_fwd + loss_bwd;
  head.tp_s = x.p.sequence_parallel ? tp_one_s : 0.0;  // gather the sequence before the logits
  head.fwd_s = gemm + loss_fwd + head.tp_s / 2.0;
  head.bwd_s = gemm_bwd + loss_bwd + head.tp_s / 2.0;
  return head;
}

}  // namespace tessera
