#include "model/parameter_count.h"

namespace tessera {

namespace {

// Per-head RMSNorm weights on the query and the key, head_dim each, shared by all heads
// (transformers Qwen3Attention: q_norm, k_norm = Qwen3RMSNorm(head_dim)).
constexpr double kQkNormWeightsPerHeadDim = 2.0;
// An MTP module's norms: the embedding and hidden-state norms before the projection and the
// final norm before the shared head (Megatron-Core MultiTokenPredictionLayer: enorm, hnorm,
// final_layernorm; the DeepSeek-V3 checkpoint's enorm, hnorm, shared_head.norm).
constexpr double kMtpNorms = 3.0;
// The MTP projection maps [norm(h_i); norm(emb(t_{i+k}))], 2h wide, to h (DeepSeek-V3 eq. 21).
constexpr double kMtpProjectionInputsPerHidden = 2.0;

double matrices_per_mlp(MlpType mlp) { return mlp == MlpType::swiglu ? 3.0 : 2.0; }

// One MLP of width f: 2 matrices (gelu, relu2) or 3 (swiglu, gate + up + down).
double mlp_weights(const ModelSpec& m, double f) { return matrices_per_mlp(m.mlp) * m.hidden * f; }

double mlp_biases(const ModelSpec& m, double f) {
  if (!m.linear_bias) return 0;
  return (matrices_per_mlp(m.mlp) - 1.0) * f + m.hidden;
}

double attention_weights(const ModelSpec& m) {
  const double h = m.hidden;
  const double a = m.heads;
  if (m.attention == AttentionKind::mla) {
    // DeepSeek-V3 §2.1.1: q = W_uq (W_dq x), [c_kv, k_rope] = W_dkv x, [k_nope, v] = W_ukv c_kv.
    const auto& l = m.mla;
    const double q_head = l.qk_nope_head_dim + l.qk_rope_head_dim;
    const double q = l.q_lora_rank > 0 ? h * l.q_lora_rank + l.q_lora_rank * a * q_head
                                       : h * a * q_head;
    const double kv_down = h * (l.kv_lora_rank + l.qk_rope_head_dim);
    const double kv_up = l.kv_lora_rank * a * (l.qk_nope_head_dim + l.v_head_dim);
    const double out = a * l.v_head_dim * h;
    return q + kv_down + kv_up + out;
  }
  const double q_width = a * m.head_dim;
  const double kv_width = static_cast<double>(m.kv_heads) * m.head_dim;
  return h * q_width * 2.0 + h * kv_width * 2.0;  // Q and O, K and V
}

double attention_extras(const ModelSpec& m) {
  double extras = 0;
  const double q_width = static_cast<double>(m.heads) * m.head_dim;
  const double kv_width = static_cast<double>(m.kv_heads) * m.head_dim;
  if (m.linear_bias || m.qkv_bias) extras += q_width + 2.0 * kv_width;
  if (m.linear_bias) extras += m.hidden;  // output projection bias
  if (m.attention_sinks) extras += m.heads;
  if (m.attention == AttentionKind::mla) {
    // The norms on the compressed latents.
    extras += m.mla.kv_lora_rank + m.mla.q_lora_rank;
  }
  if (m.qk_norm) extras += kQkNormWeightsPerHeadDim * m.head_dim;
  return extras;
}

double norm_params(const ModelSpec& m) {
  return m.norm == NormType::layernorm ? 2.0 * m.hidden : 1.0 * m.hidden;
}

double router_params(const ModelSpec& m) {
  return static_cast<double>(m.hidden) * m.moe.experts + (m.moe.router_bias ? m.moe.experts : 0);
}

}  // namespace

ParameterCount count_parameters(const ModelSpec& m) {
  ParameterCount c;
  const double h = m.hidden;
  c.embedding = static_cast<double>(m.vocab) * h;
  if (m.position == PositionEmbedding::learned) c.embedding += static_cast<double>(m.max_context) * h;
  if (m.embedding_norm) c.embedding += norm_params(m);
  c.output_head = m.tied_embeddings ? 0.0 : static_cast<double>(m.vocab) * h;
  c.final_norm = norm_params(m);
  c.attention_per_layer = attention_weights(m) + attention_extras(m);
  c.norms_per_layer = 2.0 * norm_params(m);
  c.moe_layers = static_cast<double>(m.moe_layers());
  c.dense_layers = static_cast<double>(m.dense_mlp_layers());
  if (c.dense_layers > 0)
    c.dense_mlp_per_layer = mlp_weights(m, m.ffn_hidden) + mlp_biases(m, m.ffn_hidden);
  if (m.is_moe()) {
    const double f = m.moe.expert_ffn_hidden;
    const double expert = mlp_weights(m, f) + mlp_biases(m, f);
    const double shared = m.moe.shared_experts * expert;
    c.moe_mlp_per_layer = router_params(m) + m.moe.experts * expert + shared;
    c.moe_active_mlp_per_layer = router_params(m) + m.moe.top_k * expert + shared;
  }
  c.unembedding = static_cast<double>(m.vocab) * h;
  if (m.mtp_layers > 0) {
    // Each module's transformer layer is of the main model's last-layer kind (Megatron-Core
    // num_floating_point_operations counts it the same way, by last_layer_is_moe).
    const bool moe_kind = m.is_moe_layer(m.layers - 1);
    const double block = c.attention_per_layer + c.norms_per_layer;
    const double wrapper = kMtpNorms * norm_params(m) + kMtpProjectionInputsPerHidden * h * h;
    const double modules = static_cast<double>(m.mtp_layers);
    c.mtp = modules * (wrapper + block + (moe_kind ? c.moe_mlp_per_layer : c.dense_mlp_per_layer));
    c.mtp_active =
        modules * (wrapper + block + (moe_kind ? c.moe_active_mlp_per_layer : c.dense_mlp_per_layer));
  }
  return c;
}

LayerGemmWeights dense_layer_gemm_weights(const ModelSpec& m) {
  return {attention_weights(m), m.ffn_hidden > 0 ? mlp_weights(m, m.ffn_hidden) : 0.0};
}

LayerGemmWeights moe_layer_gemm_weights(const ModelSpec& m) {
  const double f = m.moe.expert_ffn_hidden;
  const double experts = static_cast<double>(m.moe.top_k + m.moe.shared_experts);
  return {attention_weights(m), static_cast<double>(m.hidden) * m.moe.experts + experts * mlp_weights(m, f)};
}

}  // namespace tessera
