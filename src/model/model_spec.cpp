#include "model/model_spec.h"

#include "core/checks.h"
#include "core/error.h"

namespace tessera {

namespace {
// Widths beyond this are not a transformer anyone trains; it keeps products exact in double.
constexpr std::int64_t kMaxWidth = 1'000'000;
constexpr std::int64_t kMaxLayers = 100'000;
constexpr std::int64_t kMaxVocab = 100'000'000;
constexpr std::int64_t kMaxContext = 100'000'000;
constexpr std::int64_t kMaxExperts = 1'000'000;
constexpr double kMaxRopeBase = 1e12;
// Norm epsilons in published configs run from 1e-12 (BERT) to 1e-5; 0.1 bounds typos.
constexpr double kMinNormEps = 1e-30;
constexpr double kMaxNormEps = 0.1;

void require_in(const char* field, double value, double lo, double hi, const char* allowed) {
  if (!(value >= lo && value <= hi)) throw Error(field, "got " + std::to_string(value), allowed);
}

void validate_rope_and_norm(const ModelSpec& m) {
  require_in("model.rope_base", m.rope_base, 1.0, kMaxRopeBase, "a number from 1 (RoPE theta)");
  require_in("model.norm_eps", m.norm_eps, kMinNormEps, kMaxNormEps, "a number in (0, 0.1]");
  require_in("model.glu_clamp", m.glu_clamp, 0.0, kMaxWidth, "0 (no clamp) or a positive number");
  require_in("model.attention_logit_softcap", m.attention_logit_softcap, 0.0, kMaxWidth, "0 (none) or a positive number");
  require_in("model.final_logit_softcap", m.final_logit_softcap, 0.0, kMaxWidth, "0 (none) or a positive number");
  require_in("model.query_pre_attn_scalar", m.query_pre_attn_scalar, 0.0, kMaxWidth, "0 (head_dim) or a positive number");
  const RopeScaling& r = m.rope_scaling;
  if (r.kind == RopeScalingKind::none) return;
  require_in("model.rope_scaling.factor", r.factor, 1.0, kMaxContext, "a number from 1");
  if (r.kind == RopeScalingKind::linear) return;  // needs no original context
  require_positive("model.rope_scaling.original_max_positions", r.original_max_positions, kMaxContext);
}

}  // namespace

void ModelSpec::validate() const {
  require_positive("model.layers", layers, kMaxLayers);
  require_positive("model.hidden", hidden, kMaxWidth);
  require_positive("model.heads", heads, kMaxWidth);
  require_positive("model.kv_heads", kv_heads, heads);
  if (heads % kv_heads != 0)
    throw Error("model.kv_heads", "must divide heads (" + std::to_string(heads) + ")",
                "a divisor of " + std::to_string(heads));
  require_positive("model.head_dim", head_dim, kMaxWidth);
  require_positive("model.vocab", vocab, kMaxVocab);
  require_positive("model.max_context", max_context, kMaxContext);
  require_non_negative("model.sliding_window", sliding_window, kMaxContext);
  require_non_negative("model.mtp_layers", mtp_layers, kMaxLayers);
  if (attention == AttentionKind::gqa_swa && sliding_window == 0)
    throw Error("model.sliding_window", "gqa-swa needs a window", "an integer from 1");
  if (attention == AttentionKind::gqa_swa) require_positive("model.swa_global_every", swa_global_every, layers);
  validate_rope_and_norm(*this);
  if (is_moe()) {
    require_positive("model.moe.top_k", moe.top_k, moe.experts);
    require_positive("model.moe.expert_ffn_hidden", moe.expert_ffn_hidden, kMaxWidth);
    require_non_negative("model.moe.shared_experts", moe.shared_experts, kMaxExperts);
    require_non_negative("model.moe.dense_layers", moe.dense_layers, layers - 1);
    if (moe.dense_layers > 0) require_positive("model.ffn_hidden", ffn_hidden, kMaxWidth);
    require_positive("model.moe.experts", moe.experts, kMaxExperts);
    require_positive("model.moe.layer_freq", moe.layer_freq, layers);
    if (moe.layer_freq > 1) require_positive("model.ffn_hidden", ffn_hidden, kMaxWidth);
    require_non_negative("model.moe.groups", moe.groups, moe.experts);
    if (moe.groups > 0 && moe.experts % moe.groups != 0)
      throw Error("model.moe.groups", "must divide the " + std::to_string(moe.experts) + " experts",
                  "0 (no group-limited routing) or a divisor of the experts");
    require_non_negative("model.moe.topk_groups", moe.topk_groups, moe.groups);
    require_in("model.moe.aux_loss_coeff", moe.aux_loss_coeff, 0.0, 1.0, "a number from 0 to 1");
    require_in("model.moe.topk_scaling", moe.topk_scaling, 0.0, kMaxWidth, "0 (not scaled) or a positive number");
    if (moe.groups > 0 && moe.topk_groups == 0)
      throw Error("model.moe.topk_groups", "group-limited routing needs the groups each token may use",
                  "an integer from 1 to " + std::to_string(moe.groups));
  } else {
    require_positive("model.ffn_hidden", ffn_hidden, kMaxWidth);
    if (moe.experts < 0 || moe.experts > 1)
      throw Error("model.moe.experts", "got " + std::to_string(moe.experts),
                  "0 or 1 for a dense model, 2 or more for MoE");
  }
  if (attention == AttentionKind::mla) {
    require_positive("model.mla.kv_lora_rank", mla.kv_lora_rank, kMaxWidth);
    require_non_negative("model.mla.q_lora_rank", mla.q_lora_rank, kMaxWidth);
    require_positive("model.mla.qk_nope_head_dim", mla.qk_nope_head_dim, kMaxWidth);
    require_non_negative("model.mla.qk_rope_head_dim", mla.qk_rope_head_dim, kMaxWidth);
    require_positive("model.mla.v_head_dim", mla.v_head_dim, kMaxWidth);
  }
}

const char* to_string(MlpType value) {
  switch (value) {
    case MlpType::gelu: return "gelu";
    case MlpType::swiglu: return "swiglu";
    case MlpType::relu2: return "relu2";
  }
  return "?";
}
const char* to_string(RopeScalingKind value) {
  switch (value) {
    case RopeScalingKind::none: return "none";
    case RopeScalingKind::llama3: return "llama3";
    case RopeScalingKind::yarn: return "yarn";
    case RopeScalingKind::linear: return "linear";
  }
  return "?";
}
RopeScalingKind parse_rope_scaling_kind(const std::string& text) {
  if (text == "none") return RopeScalingKind::none;
  if (text == "llama3") return RopeScalingKind::llama3;
  if (text == "yarn") return RopeScalingKind::yarn;
  if (text == "linear") return RopeScalingKind::linear;
  throw Error("rope_scaling.type", "unknown value '" + text + "'", "none, llama3, yarn, linear");
}
const char* to_string(AttentionKind value) {
  switch (value) {
    case AttentionKind::mha: return "mha";
    case AttentionKind::gqa: return "gqa";
    case AttentionKind::gqa_swa: return "gqa-swa";
    case AttentionKind::mla: return "mla";
  }
  return "?";
}
const char* to_string(RouterScoring value) {
  return value == RouterScoring::softmax ? "softmax" : "sigmoid";
}
RouterScoring parse_router_scoring(const std::string& text) {
  if (text == "softmax") return RouterScoring::softmax;
  if (text == "sigmoid") return RouterScoring::sigmoid;
  throw Error("moe.scoring", "unknown value '" + text + "'", "softmax, sigmoid");
}
const char* to_string(NormType value) {
  return value == NormType::layernorm ? "layernorm" : "rmsnorm";
}
const char* to_string(PositionEmbedding value) {
  switch (value) {
    case PositionEmbedding::learned: return "learned";
    case PositionEmbedding::rope: return "rope";
    case PositionEmbedding::alibi: return "alibi";
  }
  return "?";
}

MlpType parse_mlp_type(const std::string& text) {
  if (text == "gelu") return MlpType::gelu;
  if (text == "swiglu") return MlpType::swiglu;
  if (text == "relu2") return MlpType::relu2;
  throw Error("mlp", "unknown value '" + text + "'", "gelu, swiglu, relu2");
}
AttentionKind parse_attention_kind(const std::string& text) {
  if (text == "mha") return AttentionKind::mha;
  if (text == "gqa") return AttentionKind::gqa;
  if (text == "gqa-swa") return AttentionKind::gqa_swa;
  if (text == "mla") return AttentionKind::mla;
  throw Error("attention", "unknown value '" + text + "'", "mha, gqa, gqa-swa, mla");
}
NormType parse_norm_type(const std::string& text) {
  if (text == "layernorm") return NormType::layernorm;
  if (text == "rmsnorm") return NormType::rmsnorm;
  throw Error("norm", "unknown value '" + text + "'", "layernorm, rmsnorm");
}
PositionEmbedding parse_position_embedding(const std::string& text) {
  if (text == "learned") return PositionEmbedding::learned;
  if (text == "rope") return PositionEmbedding::rope;
  if (text == "alibi") return PositionEmbedding::alibi;
  throw Error("position", "unknown value '" + text + "'", "learned, rope, alibi");
}

}  // namespace tessera
