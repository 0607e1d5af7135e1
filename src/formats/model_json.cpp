#include "formats/model_json.h"

#include "formats/json_fields.h"

namespace tessera {

using namespace json_fields;

namespace {

RopeScaling rope_scaling_from_json(const nlohmann::json& j, const std::string& path) {
  require_object(j, path);
  reject_unknown_keys(j, path, {"type", "factor", "original_max_positions", "low_freq_factor",
                                "high_freq_factor", "beta_fast", "beta_slow", "mscale", "mscale_all_dim"});
  RopeScaling r;
  r.kind = parse_rope_scaling_kind(get_string(j, "type", path));
  r.factor = get_number_or(j, "factor", path, r.factor);
  r.original_max_positions = get_int_or(j, "original_max_positions", path, 0);
  r.low_freq_factor = get_number_or(j, "low_freq_factor", path, r.low_freq_factor);
  r.high_freq_factor = get_number_or(j, "high_freq_factor", path, r.high_freq_factor);
  r.beta_fast = get_number_or(j, "beta_fast", path, r.beta_fast);
  r.beta_slow = get_number_or(j, "beta_slow", path, r.beta_slow);
  r.mscale = get_number_or(j, "mscale", path, r.mscale);
  r.mscale_all_dim = get_number_or(j, "mscale_all_dim", path, r.mscale_all_dim);
  return r;
}

nlohmann::json rope_scaling_to_json(const RopeScaling& r) {
  nlohmann::json j = {{"type", to_string(r.kind)}, {"factor", r.factor},
                      {"original_max_positions", r.original_max_positions}};
  if (r.kind == RopeScalingKind::linear) {
    j.erase("original_max_positions");
  } else if (r.kind == RopeScalingKind::llama3) {
    j["low_freq_factor"] = r.low_freq_factor;
    j["high_freq_factor"] = r.high_freq_factor;
  } else {
    j["beta_fast"] = r.beta_fast;
    j["beta_slow"] = r.beta_slow;
    j["mscale"] = r.mscale;
    j["mscale_all_dim"] = r.mscale_all_dim;
  }
  return j;
}

}  // namespace

ModelSpec model_from_json(const nlohmann::json& j, const std::string& path) {
  require_object(j, path);
  reject_unknown_keys(j, path,
                      {"name", "source", "notes", "layers", "hidden", "ffn_hidden", "heads",
                       "kv_heads", "head_dim", "vocab", "max_context", "mlp", "attention", "norm",
                       "position", "tied_embeddings", "linear_bias", "qkv_bias", "embedding_norm",
                       "attention_sinks", "dropout", "sliding_window", "qk_norm", "mtp_layers",
                       "swa_global_every", "rope_base", "rope_scaling", "norm_eps", "glu_quick_gelu",
                       "glu_linear_offset", "glu_clamp", "attention_logit_softcap",
                       "final_logit_softcap", "query_pre_attn_scalar", "moe", "mla"});
  ModelSpec m;
  m.name = get_string_or(j, "name", path, "custom");
  m.layers = get_int(j, "layers", path);
  m.hidden = get_int(j, "hidden", path);
  m.heads = get_int(j, "heads", path);
  m.kv_heads = get_int_or(j, "kv_heads", path, m.heads);
  m.head_dim = get_int_or(j, "head_dim", path, m.heads > 0 ? m.hidden / m.heads : 0);
  m.ffn_hidden = get_int_or(j, "ffn_hidden", path, 0);
  m.vocab = get_int(j, "vocab", path);
  m.max_context = get_int(j, "max_context", path);
  m.mlp = parse_mlp_type(get_string_or(j, "mlp", path, "gelu"));
  m.attention = parse_attention_kind(
      get_string_or(j, "attention", path, m.kv_heads == m.heads ? "mha" : "gqa"));
  m.norm = parse_norm_type(get_string_or(j, "norm", path, "layernorm"));
  m.position = parse_position_embedding(get_string_or(j, "position", path, "rope"));
  m.tied_embeddings = get_bool_or(j, "tied_embeddings", path, false);
  m.linear_bias = get_bool_or(j, "linear_bias", path, false);
  m.qkv_bias = get_bool_or(j, "qkv_bias", path, false);
  m.embedding_norm = get_bool_or(j, "embedding_norm", path, false);
  m.attention_sinks = get_bool_or(j, "attention_sinks", path, false);
  m.dropout = get_bool_or(j, "dropout", path, false);
  m.sliding_window = get_int_or(j, "sliding_window", path, 0);
  m.qk_norm = get_bool_or(j, "qk_norm", path, false);
  m.mtp_layers = get_int_or(j, "mtp_layers", path, 0);
  m.swa_global_every = get_int_or(j, "swa_global_every", path, m.swa_global_every);
  m.rope_base = get_number_or(j, "rope_base", path, m.rope_base);
  m.norm_eps = get_number_or(j, "norm_eps", path, m.norm_eps);
  m.glu_quick_gelu = get_bool_or(j, "glu_quick_gelu", path, false);
  m.glu_linear_offset = get_number_or(j, "glu_linear_offset", path, 0.0);
  m.glu_clamp = get_number_or(j, "glu_clamp", path, 0.0);
  m.attention_logit_softcap = get_number_or(j, "attention_logit_softcap", path, 0.0);
  m.final_logit_softcap = get_number_or(j, "final_logit_softcap", path, 0.0);
  m.query_pre_attn_scalar = get_number_or(j, "query_pre_attn_scalar", path, 0.0);
  if (has(j, "rope_scaling")) m.rope_scaling = rope_scaling_from_json(j.at("rope_scaling"), path + ".rope_scaling");
  if (has(j, "moe")) {
    const auto& moe = j.at("moe");
    const std::string p = path + ".moe";
    require_object(moe, p);
    reject_unknown_keys(moe, p, {"experts", "top_k", "expert_ffn_hidden", "shared_experts",
                                 "dense_layers", "layer_freq", "router_bias", "scoring", "groups",
                                 "topk_groups", "aux_loss_coeff", "sequence_aux_loss", "topk_scaling"});
    m.moe.experts = get_int(moe, "experts", p);
    m.moe.top_k = get_int(moe, "top_k", p);
    m.moe.expert_ffn_hidden = get_int(moe, "expert_ffn_hidden", p);
    m.moe.shared_experts = get_int_or(moe, "shared_experts", p, 0);
    m.moe.dense_layers = get_int_or(moe, "dense_layers", p, 0);
    m.moe.layer_freq = get_int_or(moe, "layer_freq", p, 1);
    m.moe.router_bias = get_bool_or(moe, "router_bias", p, false);
    if (has(moe, "scoring"))
      m.moe.scoring = parse_router_scoring(get_string(moe, "scoring", p));
    m.moe.groups = get_int_or(moe, "groups", p, 0);
    m.moe.topk_groups = get_int_or(moe, "topk_groups", p, 0);
    m.moe.aux_loss_coeff = get_number_or(moe, "aux_loss_coeff", p, 0.0);
    m.moe.sequence_aux_loss = get_bool_or(moe, "sequence_aux_loss", p, false);
    m.moe.topk_scaling = get_number_or(moe, "topk_scaling", p, 0.0);
  }
  if (has(j, "mla")) {
    const auto& mla = j.at("mla");
    const std::string p = path + ".mla";
    require_object(mla, p);
    reject_unknown_keys(mla, p, {"q_lora_rank", "kv_lora_rank", "qk_nope_head_dim",
                                 "qk_rope_head_dim", "v_head_dim"});
    m.mla.q_lora_rank = get_int_or(mla, "q_lora_rank", p, 0);
    m.mla.kv_lora_rank = get_int(mla, "kv_lora_rank", p);
    m.mla.qk_nope_head_dim = get_int(mla, "qk_nope_head_dim", p);
    m.mla.qk_rope_head_dim = get_int_or(mla, "qk_rope_head_dim", p, 0);
    m.mla.v_head_dim = get_int(mla, "v_head_dim", p);
  }
  m.validate();
  return m;
}

nlohmann::json model_to_json(const ModelSpec& m) {
  nlohmann::json j = {
      {"name", m.name},
      {"layers", m.layers},
      {"hidden", m.hidden},
      {"ffn_hidden", m.ffn_hidden},
      {"heads", m.heads},
      {"kv_heads", m.kv_heads},
      {"head_dim", m.head_dim},
      {"vocab", m.vocab},
      {"max_context", m.max_context},
      {"mlp", to_string(m.mlp)},
      {"attention", to_string(m.attention)},
      {"norm", to_string(m.norm)},
      {"position", to_string(m.position)},
      {"tied_embeddings", m.tied_embeddings},
      {"linear_bias", m.linear_bias},
      {"qkv_bias", m.qkv_bias},
      {"embedding_norm", m.embedding_norm},
      {"attention_sinks", m.attention_sinks},
      {"dropout", m.dropout},
      {"sliding_window", m.sliding_window},
      {"qk_norm", m.qk_norm},
      {"mtp_layers", m.mtp_layers},
      {"swa_global_every", m.swa_global_every},
      {"rope_base", m.rope_base},
      {"norm_eps", m.norm_eps},
      {"glu_quick_gelu", m.glu_quick_gelu},
      {"glu_linear_offset", m.glu_linear_offset},
      {"glu_clamp", m.glu_clamp},
      {"attention_logit_softcap", m.attention_logit_softcap},
      {"final_logit_softcap", m.final_logit_softcap},
      {"query_pre_attn_scalar", m.query_pre_attn_scalar},
  };
  if (m.rope_scaling.kind != RopeScalingKind::none) j["rope_scaling"] = rope_scaling_to_json(m.rope_scaling);
  if (m.is_moe())
    j["moe"] = {{"experts", m.moe.experts},
                {"top_k", m.moe.top_k},
                {"expert_ffn_hidden", m.moe.expert_ffn_hidden},
                {"shared_experts", m.moe.shared_experts},
                {"dense_layers", m.moe.dense_layers},
                {"layer_freq", m.moe.layer_freq},
                {"router_bias", m.moe.router_bias},
                {"scoring", to_string(m.moe.scoring)},
                {"groups", m.moe.groups},
                {"topk_groups", m.moe.topk_groups},
                {"aux_loss_coeff", m.moe.aux_loss_coeff},
                {"sequence_aux_loss", m.moe.sequence_aux_loss},
                {"topk_scaling", m.moe.topk_scaling}};
  if (m.attention == AttentionKind::mla)
    j["mla"] = {{"q_lora_rank", m.mla.q_lora_rank},
                {"kv_lora_rank", m.mla.kv_lora_rank},
                {"qk_nope_head_dim", m.mla.qk_nope_head_dim},
                {"qk_rope_head_dim", m.mla.qk_rope_head_dim},
                {"v_head_dim", m.mla.v_head_dim}};
  return j;
}

}  // namespace tessera
