#include "cost/activation_memory.h"

#include "core/units.h"

namespace tessera {

namespace {
constexpr double kDropoutMaskBytes = 1.0;      // one byte per element (Korthikanti §4.1)
constexpr double kSoftmaxStatBytes = 4.0;      // fp32 log-sum-exp per query and head (flash)
constexpr double kScoreBytesWithDropout = 5.0;  // softmax out 2 + dropout mask 1 + dropout out 2
constexpr double kScoreBytesNoDropout = 2.0;    // softmax out 2
}  // namespace

double layer_activation_bytes(const ModelSpec& m, const ActivationShape& a, bool moe) {
  const double tokens = a.seq * a.micro_batch;
  const double h = static_cast<double>(m.hidden);
  const double t = static_cast<double>(a.tp);
  const double sp_divisor = a.sequence_parallel ? t : 1.0;
  const double b16 = units::kBytesBf16;

  if (a.recompute == Recompute::full) return b16 * tokens * h / sp_divisor;  // the layer input

  // Outside the tensor-parallel regions: two norm inputs, the attention and MLP inputs, and
  // two dropout masks (Korthikanti's "10 s b h").
  const double replicated = 2.0 * b16 * h                                  // two norm inputs
                            + b16 * h                                      // QKV input
                            + b16 * h                                      // MLP input
                            + (m.dropout ? 2.0 * kDropoutMaskBytes * h : 0.0);  // two dropout masks

  double q_width = static_cast<double>(m.heads) * m.head_dim;
  double k_width = static_cast<double>(m.kv_heads) * m.head_dim;
  double v_width = k_width;
  double out_width = q_width;
  if (m.attention == AttentionKind::mla) {
    // Approximated as MHA after the up-projection (validation README §1).
    q_width = k_width = static_cast<double>(m.heads) * (m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim);
    v_width = out_width = static_cast<double>(m.heads) * m.mla.v_head_dim;
  }
  // Inside tensor-parallel regions: Q, K, V, the output projection's input, the MLP activation
  // input(s) and the second linear's input (Korthikanti's "24 s b h / t" for GPT).
  const double attention_split = b16 * (q_width + k_width + v_width + out_width);
  const double ffn = moe ? static_cast<double>(m.moe.expert_ffn_hidden) : static_cast<double>(m.ffn_hidden);
  const double experts = moe ? static_cast<double>(m.moe.top_k + m.moe.shared_experts) : 1.0;
  const double act_inputs = m.mlp == MlpType::swiglu ? 2.0 : 1.0;
  const double mlp_split = experts * b16 * ffn * (act_inputs + 1.0);

  double per_token = replicated / sp_divisor + (attention_split + mlp_split) / t;
  const double heads_per_gpu = static_cast<double>(m.heads) / t;
  if (a.flash_attention) {
    per_token += kSoftmaxStatBytes * heads_per_gpu;
  } else if (a.recompute != Recompute::selective) {
    const double score_bytes = m.dropout ? kScoreBytesWithDropout : kScoreBytesNoDropout;
    per_token += score_bytes * heads_per_gpu * a.seq;  // 5 a s / t per token with dropout
  }
  return per_token * tokens;
}

}  // namespace tessera
