#include "model/flops.h"

#include <algorithm>

#include "core/error.h"
#include "model/parameter_count.h"

namespace tessera {

namespace {
constexpr double kFlopsPerMac = 2.0;
// Backward computes the input gradient and the weight gradient: two GEMMs of the forward's size.
constexpr double kBackwardOverForward = 2.0;
// MTP wrapper per module (Megatron-Core's count): enorm + hnorm + final norm, and the 2h -> h
// projection (DeepSeek-V3 eq. 21).
constexpr double kMtpNormWeightsPerHidden = 3.0;
constexpr double kMtpProjectionInputs = 2.0;
}  // namespace

const char* to_string(Recompute value) {
  switch (value) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

Recompute parse_recompute(const std::string& text) {
  if (text == "none") return Recompute::none;
  if (text == "selective") return Recompute::selective;
  if (text == "full") return Recompute::full;
  throw Error("recompute", "unknown value '" + text + "'", "none, selective, full");
}

double causal_attention_span(std::int64_t seq, std::int64_t window) {
  const double s = static_cast<double>(seq);
  if (window <= 0 || window >= seq) return (s + 1.0) / 2.0;
  // Query i sees min(i, w) keys (1-based): the first w queries form a triangle, the rest see w.
  const double w = static_cast<double>(window);
  return ((w * (w + 1.0) / 2.0) + (s - w) * w) / s;
}

ForwardFlopsPerToken forward_flops_per_token(const ModelSpec& m, std::int64_t seq,
                                             bool causal_span) {
  ForwardFlopsPerToken f;
  const auto dense = dense_layer_gemm_weights(m);
  const auto moe = moe_layer_gemm_weights(m);
  const double dense_layers = static_cast<double>(m.dense_mlp_layers());
  const double moe_layers = static_cast<double>(m.moe_layers());
  const double h = static_cast<double>(m.hidden);
  f.attention_linear = kFlopsPerMac * m.layers * dense.attention;
  f.mlp = kFlopsPerMac * (dense_layers * dense.mlp + moe_layers * moe.mlp);
  f.logits = kFlopsPerMac * static_cast<double>(m.vocab) * h;

  // Scores use the query/key width, values the value width: MLA's q and k heads are
  // nope + rope wide and its v heads v_head_dim wide (DeepSeek-V3 §2.1.1, eqs. 1-11).
  double qk_dim = static_cast<double>(m.head_dim);
  double v_dim = static_cast<double>(m.head_dim);
  if (m.attention == AttentionKind::mla) {
    qk_dim = static_cast<double>(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim);
    v_dim = static_cast<double>(m.mla.v_head_dim);
  }
  const double per_key = kFlopsPerMac * m.heads * (qk_dim + v_dim);
  const double full_span = causal_span ? causal_attention_span(seq, 0) : static_cast<double>(seq);
  double keys_summed_over_layers = static_cast<double>(m.layers) * full_span;
  if (causal_span && m.attention == AttentionKind::gqa_swa) {
    // Every swa_global_every-th layer attends over the whole context (GPT-OSS and Gemma-2
    // alternate; Gemma-3 has five local layers per global one), the rest over the window.
    const double global = static_cast<double>(m.layers / m.swa_global_every);
    const double local = static_cast<double>(m.layers) - global;
    keys_summed_over_layers =
        local * causal_attention_span(seq, m.sliding_window) + global * full_span;
  }
  f.attention_core = per_key * keys_summed_over_layers;

  if (m.mtp_layers > 0) {
    // Megatron-Core num_floating_point_operations (megatron/training/training.py at d98e8a64):
    // the MTP layers count as num_layers of the last layer's kind ("last_layer_is_moe"), plus
    // "MTP eh norm + final norm: 3 * hidden" and "eh proj: 2 * hidden * hidden" per token, plus
    // one logit GEMM per module ("mtp_num_layers + 1"). Its attention spans the whole sequence.
    const double modules = static_cast<double>(m.mtp_layers);
    const bool moe_kind = m.is_moe_layer(m.layers - 1);
    const double layer = kFlopsPerMac * (dense.attention + (moe_kind ? moe.mlp : dense.mlp)) +
                         per_key * full_span;
    const double wrapper = kFlopsPerMac * (kMtpNormWeightsPerHidden * h + kMtpProjectionInputs * h * h);
    f.mtp_blocks = modules * (layer + wrapper);
    f.mtp_logits = modules * f.logits;
  }
  return f;
}

IterationFlops iteration_flops(const ModelSpec& model, double tokens, std::int64_t seq,
                               Recompute recompute) {
  const auto per_token = forward_flops_per_token(model, seq, /*causal_span=*/false);
  IterationFlops flops;
  flops.forward = tokens * per_token.total();
  flops.backward = kBackwardOverForward * flops.forward;
  switch (recompute) {
    case Recompute::none: break;
    case Recompute::selective: flops.recompute = tokens * per_token.attention_core; break;
    case Recompute::full: flops.recompute = tokens * per_token.layers(); break;
  }
  return flops;
}

}  // namespace tessera
