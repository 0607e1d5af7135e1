#include "cost/eager_kernels.h"

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

struct Widths {
  double h, qkv, f;
};
Widths widths(const ModelSpec& m) {
  const double q = static_cast<double>(m.heads) * static_cast<double>(m.head_dim);
  const double kv = static_cast<double>(m.kv_heads) * static_cast<double>(m.head_dim);
  const double f = m.is_moe() ? static_cast<double>(m.moe.expert_ffn_hidden) * static_cast<double>(m.moe.top_k)
                              : static_cast<double>(m.ffn_hidden);
  return {static_cast<double>(m.hidden), q + kv, m.mlp == MlpType::swiglu ? f : 0.0};
}
}  // namespace

double eager_layer_forward_bytes_per_token(const ModelSpec& m) {
  const Widths w = widths(m);
  const double rope = m.position == PositionEmbedding::rope ? kRopeForwardBytes : 0.0;
  return (kNorms * kNormForwardBytes + kLinearInputs * kInputCastBytes + kResidualAdds * kResidualAddBytes) * w.h +
         (rope + kSdpaCastBytes) * w.qkv + kSwigluForwardBytes * w.f;
}

double eager_layer_backward_bytes_per_token(const ModelSpec& m) {
  const Widths w = widths(m);
  const double rope = m.position == PositionEmbedding::rope ? kRopeBackwardBytes : 0.0;
  return (kNorms * kNormBackwardBytes + kInputCastBackwardBytes + kResidualAdds * kResidualCastBackwardBytes) * w.h +
         rope * w.qkv + kSwigluBackwardBytes * w.f;
}

}  // namespace tessera
