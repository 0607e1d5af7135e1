#include "cost/adapter_cost.h"

#include <bit>

#include "cost/adapter_parameters.h"
#include "cost/compute_cost.h"
#include "cost/eager_kernels.h"
#include "core/units.h"

namespace tessera {

namespace {
// Bytes per parameter of one dequantization pass: the NF4 weight and its constants read, the
// bf16 weight written.
constexpr double kDequantBytesPerParam = kNf4BytesPerParam + units::kBytesBf16;

struct TargetShape {
  unsigned bit;
  double d_in, d_out;
};

// One targeted matrix's adapter GEMMs forward: (T x d_in)(d_in x r) and (T x r)(r x d_out).
double target_forward_s(const LayerContext& x, double d_in, double d_out) {
  const double r = static_cast<double>(x.p.tuning.lora_rank);
  return gemm_time_s(x.tokens, r, d_in, 1.0, x.c.gpu, false) + gemm_time_s(x.tokens, d_out, r, 1.0, x.c.gpu, false);
}
}  // namespace

AdapterLayerCost adapter_layer_cost(const LayerContext& x, bool moe) {
  AdapterLayerCost out;
  const FineTuning& t = x.p.tuning;
  if (!t.adapters()) return out;
  const ModelSpec& m = x.m;
  const double h = static_cast<double>(m.hidden);
  const double q = static_cast<double>(m.heads * m.head_dim) / x.tp;
  const double kv = static_cast<double>(m.kv_heads * m.head_dim) / x.tp;
  const double f = static_cast<double>(m.ffn_hidden) / x.tp;
  const TargetShape targets[] = {{kLoraQ, h, q},       {kLoraK, h, kv},    {kLoraV, h, kv}, {kLoraO, q, h},
                                 {kLoraGate, h, f},    {kLoraUp, h, f},    {kLoraDown, f, h}};
  for (const auto& target : targets) {
    const bool mlp = target.bit == kLoraGate || target.bit == kLoraUp || target.bit == kLoraDown;
    if (!(t.lora_targets & target.bit) || (mlp && moe)) continue;
    if (target.bit == kLoraGate && m.mlp != MlpType::swiglu) continue;
    out.fwd_s += target_forward_s(x, target.d_in, target.d_out);
    out.host_ops += kAdapterHostOpsPerTarget;
  }
  out.bwd_s = 2.0 * out.fwd_s;  // input and weight gradients of both adapter matrices
  if (t.quantized_base())
    out.dequant_s = memory_bound_time_s(kDequantBytesPerParam * eager_layer_cast_params(m, moe) / x.tp, x.c.gpu);
  return out;
}

IterationFlops adapter_iteration_flops(IterationFlops flops, const ModelSpec& m, const FineTuning& tuning, double tokens,
                                       std::int64_t seq) {
  const ForwardFlopsPerToken f = forward_flops_per_token(m, seq, false);
  const double linear_per_token = f.attention_linear + f.mlp + f.logits + f.mtp();
  const double adapters = adapter_params(m, tuning);
  flops.backward += 2.0 * 2.0 * adapters * tokens - linear_per_token * tokens;
  flops.forward += 2.0 * adapters * tokens;
  return flops;
}

}  // namespace tessera
