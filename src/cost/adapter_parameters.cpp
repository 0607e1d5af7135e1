#include "cost/adapter_parameters.h"

namespace tessera {

namespace {
// r (d_in + d_out) for one targeted matrix of d_out x d_in.
double pair(double rank, double d_in, double d_out) { return rank * (d_in + d_out); }

double attention_adapters(const ModelSpec& m, const FineTuning& t) {
  const double r = static_cast<double>(t.lora_rank);
  const double h = static_cast<double>(m.hidden);
  const double q = static_cast<double>(m.heads * m.head_dim);
  const double kv = static_cast<double>(m.kv_heads * m.head_dim);
  double n = 0;
  if (t.lora_targets & kLoraQ) n += pair(r, h, q);
  if (t.lora_targets & kLoraK) n += pair(r, h, kv);
  if (t.lora_targets & kLoraV) n += pair(r, h, kv);
  if (t.lora_targets & kLoraO) n += pair(r, q, h);
  return n;
}

double mlp_adapters(const ModelSpec& m, const FineTuning& t) {
  const double r = static_cast<double>(t.lora_rank);
  const double h = static_cast<double>(m.hidden);
  const double f = static_cast<double>(m.ffn_hidden);
  double n = 0;
  if ((t.lora_targets & kLoraGate) && m.mlp == MlpType::swiglu) n += pair(r, h, f);
  if (t.lora_targets & kLoraUp) n += pair(r, h, f);
  if (t.lora_targets & kLoraDown) n += pair(r, f, h);
  return n;
}
}  // namespace

double adapter_params_per_layer(const ModelSpec& m, const FineTuning& t, bool moe_layer) {
  if (!t.adapters()) return 0.0;
  return attention_adapters(m, t) + (moe_layer ? 0.0 : mlp_adapters(m, t));
}

double adapter_params(const ModelSpec& m, const FineTuning& t) {
  const double moe = static_cast<double>(m.moe_layers_in(0, m.layers));
  const double dense = static_cast<double>(m.layers) - moe;
  return dense * adapter_params_per_layer(m, t, false) + moe * adapter_params_per_layer(m, t, true);
}

}  // namespace tessera
