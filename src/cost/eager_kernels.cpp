#include "cost/eager_kernels.h"

#include "model/parameter_count.h"

namespace tessera {

namespace {
// Forward terms (eager_kernels.h), bytes per token per element of the width they scale with.
constexpr double kNormForwardBytes = 28.0;        // per h, each of the 2 RMSNorms
constexpr double kInputCastBytes = 6.0;           // per h, each of the 5 linear-input casts
constexpr double kResidualAddBytes = 10.0;        // per h, each of the 2 adds
constexpr double kRopeForwardBytes = 30.0;        // per q / kv width
constexpr double kSdpaCastBytes = 6.0;            // per q / kv width
constexpr double kSwigluForwardBytes = 10.0;      // per f
// Backward terms.
constexpr double kNormBackwardBytes = 80.0 + 24.0;  // per h, each RMSNorm (w n, x r, mean, pow) + summing 3 gradients into x
constexpr double kInputCastBackwardBytes = 18.0 + 24.0 + 12.0 + 12.0;  // per h, all five and their sums
constexpr double kResidualCastBackwardBytes = 6.0;  // per h, each of the 2 branches
constexpr double kRopeBackwardBytes = 56.0;       // per q / kv width
constexpr double kSwigluBackwardBytes = 18.0;     // per f
constexpr double kNorms = 2.0, kLinearInputs = 5.0, kResidualAdds = 2.0;

// SwiGLU's SiLU and gate product; a 2-matrix MLP's activation is not counted.
double swiglu_width(const ModelSpec& m, const EagerLayerWidths& w) { return m.mlp == MlpType::swiglu ? w.ffn : 0.0; }
}  // namespace

EagerLayerWidths eager_layer_widths(const ModelSpec& m) {
  EagerLayerWidths w;
  w.hidden = static_cast<double>(m.hidden);
  w.q = static_cast<double>(m.heads) * static_cast<double>(m.head_dim);
  w.kv = static_cast<double>(m.kv_heads) * static_cast<double>(m.head_dim);
  w.ffn = m.is_moe() ? static_cast<double>(m.moe.expert_ffn_hidden) * static_cast<double>(m.moe.top_k)
                     : static_cast<double>(m.ffn_hidden);
  return w;
}

double eager_layer_cast_params(const ModelSpec& m, bool moe) {
  const ParameterCount c = count_parameters(m);
  return c.attention_per_layer + (moe ? c.moe_mlp_per_layer : c.dense_mlp_per_layer);
}

double eager_layer_forward_bytes_per_token(const ModelSpec& m) {
  const EagerLayerWidths w = eager_layer_widths(m);
  const double rope = m.position == PositionEmbedding::rope ? kRopeForwardBytes : 0.0;
  return (kNorms * kNormForwardBytes + kLinearInputs * kInputCastBytes + kResidualAdds * kResidualAddBytes) * w.hidden +
         (rope + kSdpaCastBytes) * (w.q + w.kv) + kSwigluForwardBytes * swiglu_width(m, w);
}

double eager_layer_backward_bytes_per_token(const ModelSpec& m) {
  const EagerLayerWidths w = eager_layer_widths(m);
  const double rope = m.position == PositionEmbedding::rope ? kRopeBackwardBytes : 0.0;
  return (kNorms * kNormBackwardBytes + kInputCastBackwardBytes + kResidualAdds * kResidualCastBackwardBytes) * w.hidden +
         rope * (w.q + w.kv) + kSwigluBackwardBytes * swiglu_width(m, w);
}

}  // namespace tessera
