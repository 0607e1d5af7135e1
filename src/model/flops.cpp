#include "model/flops.h"

#include <algorithm>

#include "core/error.h"
#include "model/parameter_count.h"

namespace tessera {

namespace {
constexpr double kFlopsPerMac = 2.0;
// Backward computes the input gradient and the weight gradient: two GEMMs of the forward's size.
constexpr double kBackwardOverForward = 2.0;
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
  f.attention_linear = kFlopsPerMac * m.layers * dense.attention;
  f.mlp = kFlopsPerMac * (dense_layers * dense.mlp + moe_layers * moe.mlp);
  f.logits = kFlopsPerMac * static_cast<double>(m.vocab) * m.hidden;

  double qk_dim = static_cast<double>(m.head_dim);
  double v_dim = static_cast<double>(m.head_dim);
  if (m.attention == AttentionKind::mla) {
    qk_dim = static_cast<double>(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim);
    v_dim = static_cast<double>(m.mla.v_head_dim);
  }
  const double per_key = kFlopsPerMac * m.heads * (qk_dim + v_dim);
  double keys_summed_over_layers = static_cast<double>(m.layers) * seq;
  if (causal_span) {
    if (m.attention == AttentionKind::gqa_swa) {
      // GPT-OSS alternates windowed and full layers.
      const double local = static_cast<double>(m.layers / 2);
      const double global = static_cast<double>(m.layers) - local;
      keys_summed_over_layers = local * causal_attention_span(seq, m.sliding_window) +
                                global * causal_attention_span(seq, 0);
    } else {
      keys_summed_over_layers = static_cast<double>(m.layers) * causal_attention_span(seq, 0);
    }
  }
  f.attention_core = per_key * keys_summed_over_layers;
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
