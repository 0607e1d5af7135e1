#include "formats/hf_config.h"

#include <algorithm>
#include <filesystem>
#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "formats/hf_config_fields.h"
#include "formats/hf_pre_llama_configs.h"
#include "formats/json_fields.h"

namespace tessera {

namespace {

using namespace hf_config;
enum class Arch {
  llama, mistral, mixtral, qwen2, qwen2_moe, qwen3, qwen3_moe, gemma, phi3, nemotron,
  deepseek_v2, deepseek_v3, gpt_oss, gpt2, gpt_neo, gpt_neox, opt, bloom, falcon, llama4,
  gemma2, gemma3
};

struct ArchName {
  const char* architecture;  // transformers class in config.json "architectures"
  const char* model_type;    // config.json "model_type"
  Arch arch;
  bool listed;  // shown in the "allowed" list (false for legacy aliases)
};

constexpr ArchName kArchitectures[] = {
    {"LlamaForCausalLM", "llama", Arch::llama, true},
    {"MistralForCausalLM", "mistral", Arch::mistral, true},
    {"MixtralForCausalLM", "mixtral", Arch::mixtral, true},
    {"Qwen2ForCausalLM", "qwen2", Arch::qwen2, true},
    {"Qwen2MoeForCausalLM", "qwen2_moe", Arch::qwen2_moe, true},
    {"Qwen3ForCausalLM", "qwen3", Arch::qwen3, true},
    {"Qwen3MoeForCausalLM", "qwen3_moe", Arch::qwen3_moe, true},
    {"GemmaForCausalLM", "gemma", Arch::gemma, true},
    {"Gemma2ForCausalLM", "gemma2", Arch::gemma2, true},
    {"Gemma3ForCausalLM", "gemma3_text", Arch::gemma3, true},
    {"Gemma3ForConditionalGeneration", "gemma3", Arch::gemma3, true},
    {"Phi3ForCausalLM", "phi3", Arch::phi3, true},
    {"NemotronForCausalLM", "nemotron", Arch::nemotron, true},
    {"DeepseekV2ForCausalLM", "deepseek_v2", Arch::deepseek_v2, true},
    {"DeepseekV3ForCausalLM", "deepseek_v3", Arch::deepseek_v3, true},
    {"GptOssForCausalLM", "gpt_oss", Arch::gpt_oss, true},
    {"GPT2LMHeadModel", "gpt2", Arch::gpt2, true},
    {"GPTNeoForCausalLM", "gpt_neo", Arch::gpt_neo, true},
    {"GPTNeoXForCausalLM", "gpt_neox", Arch::gpt_neox, true},
    {"OPTForCausalLM", "opt", Arch::opt, true},
    {"BloomForCausalLM", "bloom", Arch::bloom, true},
    {"FalconForCausalLM", "falcon", Arch::falcon, true},
    {"Llama4ForConditionalGeneration", "llama4", Arch::llama4, true},
    {"Llama4ForCausalLM", "llama4_text", Arch::llama4, true},
    // Falcon's original remote-code names.
    {"RWForCausalLM", "RefinedWebModel", Arch::falcon, false},
    {"RWForCausalLM", "RefinedWeb", Arch::falcon, false},
};

std::string architecture_list() {
  std::string list;
  for (const auto& a : kArchitectures)
    if (a.listed) list += (list.empty() ? "" : ", ") + std::string(a.architecture);
  return list;
}

std::string model_type_list() {
  std::string list;
  for (const auto& a : kArchitectures)
    if (a.listed) list += (list.empty() ? "" : ", ") + std::string(a.model_type);
  return list;
}

// The architecture: the first supported entry of "architectures", else "model_type".
Arch resolve_architecture(const Json& j) {
  if (has(j, "architectures")) {
    const Json& list = j.at("architectures");
    if (!list.is_array())
      throw Error(field("architectures"), "expected a list of strings, got " + json_fields::excerpt(list),
                  architecture_list());
    for (const Json& entry : list) {
      if (!entry.is_string())
        throw Error(field("architectures"), "expected a list of strings, got " + json_fields::excerpt(list),
                    architecture_list());
      const auto name = entry.get<std::string>();
      for (const auto& a : kArchitectures)
        if (name == a.architecture) return a.arch;
    }
    if (!list.empty())
      throw Error(field("architectures"),
                  "unsupported architecture '" + list.front().get<std::string>() + "'",
                  architecture_list());
  }
  if (has(j, "model_type")) {
    const auto type = json_fields::get_string(j, "model_type", kPath);
    for (const auto& a : kArchitectures)
      if (type == a.model_type) return a.arch;
    throw Error(field("model_type"), "unsupported model_type '" + type + "'", model_type_list());
  }
  throw Error(field("architectures"), "missing (and no model_type)", architecture_list());
}

// llama.cpp-style attention_bias / mlp_bias flags: biases on every linear layer, or only on the
// attention projections (counted as Q/K/V biases; the output-projection bias of `hidden`
// parameters per layer is not representable and is dropped). An MLP-only bias is dropped too.
void set_llama_biases(const Json& j, ModelSpec& m) {
  const bool attention_bias = optional_bool(j, "attention_bias", false);
  const bool mlp_bias = optional_bool(j, "mlp_bias", false);
  m.linear_bias = attention_bias && mlp_bias;
  m.qkv_bias = attention_bias && !mlp_bias;
}

// Keys shared by the Llama-style configs (num_hidden_layers, hidden_size, ...).
ModelSpec read_llama_style(const Json& j, bool tie_default, std::int64_t head_dim_default) {
  ModelSpec m;
  m.layers = require_int(j, {"num_hidden_layers"});
  m.hidden = require_int(j, {"hidden_size"});
  m.heads = require_int(j, {"num_attention_heads"});
  m.kv_heads = optional_int(j, {"num_key_value_heads"}, m.heads);
  m.head_dim = optional_int(
      j, {"head_dim"}, head_dim_default > 0 ? head_dim_default : per_head(m.hidden, m.heads));
  m.vocab = require_int(j, {"vocab_size"});
  m.max_context = require_int(j, {"max_position_embeddings"});
  m.tied_embeddings = optional_bool(j, "tie_word_embeddings", tie_default);
  m.mlp = MlpType::swiglu;
  m.norm = NormType::rmsnorm;
  m.position = PositionEmbedding::rope;
  m.attention = plain_attention(m);
  return m;
}

std::int64_t require_experts(const Json& j, std::initializer_list<const char*> keys) {
  const std::int64_t experts = require_int(j, keys);
  if (experts < 2)
    throw Error(field(*keys.begin()), "got " + std::to_string(experts),
                "an integer from 2 (a mixture of experts)");
  return experts;
}

// ModelSpec's MoE layers are those with (i - dense_layers) % layer_freq == layer_freq - 1 after
// `dense_layers` leading dense ones. Sets the two to reproduce `is_moe` (one flag per layer)
// exactly, or throws naming `key` when no pair does.
void set_moe_layers(const std::vector<bool>& is_moe, const char* key, ModelSpec& m) {
  const auto layers = static_cast<std::int64_t>(is_moe.size());
  std::int64_t first = 0;
  while (first < layers && !is_moe[first]) ++first;
  if (first == layers)
    throw Error(field(key), "leaves no MoE layer among the " + std::to_string(layers),
                "a pattern with at least one MoE layer");
  // The first MoE layer ends the first group: dense_layers = first - (layer_freq - 1).
  for (std::int64_t freq = 1; freq <= first + 1; ++freq) {
    const std::int64_t dense = first - (freq - 1);
    bool same = true;
    for (std::int64_t i = 0; i < layers && same; ++i)
      same = is_moe[i] == (i >= dense && (i - dense) % freq == freq - 1);
    if (same) {
      m.moe.dense_layers = dense;
      m.moe.layer_freq = freq;
      return;
    }
  }
  std::string pattern;
  for (std::int64_t i = 0; i < layers; ++i) {
    if (!is_moe[i]) continue;
    if (!pattern.empty()) pattern += ',';
    pattern += std::to_string(i);
  }
  throw Error(field(key),
              "MoE layers {" + pattern + "} are not k leading dense layers, then every n-th layer",
              "a pattern of leading dense layers followed by one MoE layer in every n");
}

// Qwen2-MoE / Qwen3-MoE (transformers Qwen3MoeDecoderLayer): layer i is MoE unless listed in
// mlp_only_layers, and when (i + 1) % decoder_sparse_step == 0.
void set_qwen_moe_layers(const Json& j, ModelSpec& m) {
  const std::int64_t step = optional_int(j, {"decoder_sparse_step"}, 1);
  if (step < 1)
    throw Error(field("decoder_sparse_step"), "got " + std::to_string(step), "an integer from 1");
  std::vector<std::int64_t> mlp_only;
  if (has(j, "mlp_only_layers")) mlp_only = int_list(j, "mlp_only_layers");
  if (!loopable(m.layers)) return;
  std::vector<bool> is_moe(static_cast<std::size_t>(m.layers));
  for (std::int64_t i = 0; i < m.layers; ++i)
    is_moe[i] = (i + 1) % step == 0 &&
                std::find(mlp_only.begin(), mlp_only.end(), i) == mlp_only.end();
  set_moe_layers(is_moe, mlp_only.empty() ? "decoder_sparse_step" : "mlp_only_layers", m);
}

// DeepSeek-V2/V3 (modeling_deepseek.py): layer i is MoE when i >= first_k_dense_replace and
// i % moe_layer_freq == 0.
void set_deepseek_moe_layers(const Json& j, ModelSpec& m) {
  // transformers' DeepseekV3Config defaults (first_k_dense_replace=3, moe_layer_freq=1).
  const std::int64_t first_dense = optional_int(j, {"first_k_dense_replace"}, 3);
  const std::int64_t freq = optional_int(j, {"moe_layer_freq"}, 1);
  if (first_dense < 0)
    throw Error(field("first_k_dense_replace"), "got " + std::to_string(first_dense),
                "an integer from 0");
  if (freq < 1)
    throw Error(field("moe_layer_freq"), "got " + std::to_string(freq), "an integer from 1");
  if (!loopable(m.layers)) return;
  std::vector<bool> is_moe(static_cast<std::size_t>(m.layers));
  for (std::int64_t i = 0; i < m.layers; ++i) is_moe[i] = i >= first_dense && i % freq == 0;
  set_moe_layers(is_moe, freq > 1 ? "moe_layer_freq" : "first_k_dense_replace", m);
}

// Llama 4 (transformers Llama4TextConfig): moe_layers when given, else every
// interleave_moe_layer_step-th layer counting from layer step - 1.
void set_llama4_moe_layers(const Json& j, ModelSpec& m) {
  const std::int64_t step = optional_int(j, {"interleave_moe_layer_step"}, 1);
  if (step < 1)
    throw Error(field("interleave_moe_layer_step"), "got " + std::to_string(step),
                "an integer from 1");
  const bool listed = has(j, "moe_layers") && !j.at("moe_layers").is_null();
  std::vector<std::int64_t> moe_layers;
  if (listed) moe_layers = int_list(j, "moe_layers");
  if (!loopable(m.layers)) return;
  std::vector<bool> is_moe(static_cast<std::size_t>(m.layers));
  for (std::int64_t i = 0; i < m.layers; ++i)
    is_moe[i] = listed ? std::find(moe_layers.begin(), moe_layers.end(), i) != moe_layers.end()
                       : (i + 1) % step == 0;
  set_moe_layers(is_moe, listed ? "moe_layers" : "interleave_moe_layer_step", m);
}

// transformers' DeepSeek and Llama 4 routers: "softmax" or "sigmoid".
RouterScoring router_scoring(const Json& j, const char* key, RouterScoring fallback) {
  if (!has(j, key)) return fallback;
  const std::string text = json_fields::get_string(j, key, kPath);
  if (text == "softmax") return RouterScoring::softmax;
  if (text == "sigmoid") return RouterScoring::sigmoid;
  throw Error(field(key), "unknown value '" + text + "'", "softmax, sigmoid");
}

// ---- one reader per family ----

ModelSpec read_llama_family(const Json& j, Arch arch) {
  std::int64_t head_dim_default = 0;  // hidden / heads
  bool tie_default = false;
  if (arch == Arch::qwen3) head_dim_default = 128;  // Qwen3Config default
  if (arch == Arch::gemma) {
    head_dim_default = 256;  // GemmaConfig default
    tie_default = true;
  }
  ModelSpec m = read_llama_style(j, tie_default, head_dim_default);
  m.ffn_hidden = require_int(j, {"intermediate_size"});
  switch (arch) {
    case Arch::qwen3:
      m.qk_norm = true;  // Qwen3Attention: q_norm, k_norm over head_dim, always
      set_llama_biases(j, m);
      break;
    case Arch::llama:
    case Arch::gemma:  // GeGLU (gate_proj, up_proj, down_proj): counted as swiglu
      set_llama_biases(j, m);
      break;
    case Arch::qwen2:
      m.qkv_bias = true;  // Qwen2Attention: bias on q/k/v only, always
      break;
    case Arch::nemotron:  // squared-ReLU, 2-matrix MLP; LayerNorm1P (weight and bias)
      m.mlp = mlp_type(false, optional_string(j, {"hidden_act"}, "relu2"));
      m.norm = NormType::layernorm;
      set_llama_biases(j, m);
      break;
    case Arch::mistral:  // sliding_window covers every layer: counted as full attention
    case Arch::phi3:     // fused qkv / gate_up: same weights; sliding_window likewise
    default:
      break;
  }
  return m;
}

ModelSpec read_mixtral(const Json& j) {
  ModelSpec m = read_llama_style(j, false, 0);
  m.moe.experts = require_experts(j, {"num_local_experts"});
  m.moe.top_k = require_int(j, {"num_experts_per_tok"});
  m.moe.expert_ffn_hidden = require_int(j, {"intermediate_size"});  // per-expert width
  m.ffn_hidden = 0;  // every layer is MoE
  return m;
}

ModelSpec read_qwen_moe(const Json& j, Arch arch) {
  ModelSpec m = read_llama_style(j, false, arch == Arch::qwen3_moe ? 128 : 0);
  m.moe.experts = require_experts(j, {"num_experts"});
  m.moe.top_k = require_int(j, {"num_experts_per_tok"});
  m.moe.expert_ffn_hidden = require_int(j, {"moe_intermediate_size"});
  if (arch == Arch::qwen2_moe) {
    m.qkv_bias = true;
    // One shared expert of shared_expert_intermediate_size, expressed as that many
    // expert-wide shared experts (Qwen1.5-MoE-A2.7B: 5632 / 1408 = 4); the non-integer case is
    // rounded. Its 1-output sigmoid gate (`hidden` parameters per layer) is not counted.
    const std::int64_t shared = require_int(j, {"shared_expert_intermediate_size"});
    const std::int64_t width = m.moe.expert_ffn_hidden;
    if (shared < 0)
      throw Error(field("shared_expert_intermediate_size"), "got " + std::to_string(shared),
                  "an integer from 0");
    if (width > 0 && shared > 0)
      m.moe.shared_experts = std::max<std::int64_t>(1, (shared + width / 2) / width);
  } else {
    set_llama_biases(j, m);
    m.qk_norm = true;  // Qwen3MoeAttention: q_norm, k_norm over head_dim
  }
  set_qwen_moe_layers(j, m);
  m.ffn_hidden = m.dense_mlp_layers() > 0 ? require_int(j, {"intermediate_size"}) : 0;
  return m;
}

ModelSpec read_deepseek(const Json& j, Arch arch) {
  ModelSpec m = read_llama_style(j, false, 0);
  m.attention = AttentionKind::mla;
  // q_lora_rank null (DeepSeek-V2-Lite) means Q is projected directly.
  m.mla.q_lora_rank = optional_int(j, {"q_lora_rank"}, 0);
  m.mla.kv_lora_rank = require_int(j, {"kv_lora_rank"});
  m.mla.qk_nope_head_dim = require_int(j, {"qk_nope_head_dim"});
  m.mla.qk_rope_head_dim = require_int(j, {"qk_rope_head_dim"});
  m.mla.v_head_dim = require_int(j, {"v_head_dim"});
  m.head_dim = m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim;  // query/key head width
  m.moe.experts = require_experts(j, {"n_routed_experts"});
  m.moe.top_k = require_int(j, {"num_experts_per_tok"});
  m.moe.expert_ffn_hidden = require_int(j, {"moe_intermediate_size"});
  // Each shared expert is moe_intermediate_size wide (DeepSeekMoE); transformers' default is 1.
  m.moe.shared_experts = optional_int(j, {"n_shared_experts"}, arch == Arch::deepseek_v3 ? 1 : 0);
  set_deepseek_moe_layers(j, m);
  m.ffn_hidden = m.dense_mlp_layers() > 0 ? require_int(j, {"intermediate_size"}) : 0;
  const bool v3 = arch == Arch::deepseek_v3;
  // V3's auxiliary-loss-free balancing adds e_score_correction_bias (one per expert).
  const std::string topk = optional_string(j, {"topk_method"}, v3 ? "noaux_tc" : "greedy");
  m.moe.router_bias = topk == "noaux_tc";
  // transformers: DeepseekV3Config scoring_func "sigmoid"; V2's gate is a softmax.
  m.moe.scoring = router_scoring(j, "scoring_func", v3 ? RouterScoring::sigmoid : RouterScoring::softmax);
  // Group-limited routing ("group_limited_greedy" in V2, "noaux_tc" in V3) over n_group groups,
  // topk_group of them per token; "greedy" or a single group (Kimi K2) routes over all experts.
  const std::int64_t groups = optional_int(j, {"n_group"}, v3 ? 8 : 1);
  if (topk != "greedy" && groups > 1) {
    m.moe.groups = groups;
    m.moe.topk_groups = optional_int(j, {"topk_group"}, v3 ? 4 : 1);
  }
  // DeepSeek-V3 §2.1.2: a sequence-wise balance loss (aux_loss_alpha, 0.0001) next to the
  // bias-based balancing; V2's is per batch. routed_scaling_factor scales the routed weights.
  m.moe.aux_loss_coeff = optional_number(j, {"aux_loss_alpha"}, 0.0);
  m.moe.sequence_aux_loss = optional_bool(j, "seq_aux", v3);
  m.moe.topk_scaling = optional_number(j, {"routed_scaling_factor"}, 0.0);
  // Multi-token-prediction modules (DeepSeek-V3 §2.2), stored as extra layers in the checkpoint.
  m.mtp_layers = optional_int(j, {"num_nextn_predict_layers"}, 0);
  set_llama_biases(j, m);
  return m;
}

ModelSpec read_gpt_oss(const Json& j) {
  ModelSpec m = read_llama_style(j, false, 64);  // GptOssConfig: head_dim 64
  m.moe.experts = require_experts(j, {"num_local_experts"});
  m.moe.top_k = require_int(j, {"num_experts_per_tok", "experts_per_token"});
  m.moe.expert_ffn_hidden = require_int(j, {"intermediate_size"});
  m.moe.router_bias = true;
  m.ffn_hidden = 0;
  // Biases on q/k/v/o and on both expert projections (gate_up_proj_bias, down_proj_bias).
  m.linear_bias = true;
  m.attention_sinks = true;
  // GptOssExperts: (up + 1) * gate * sigmoid(1.702 gate), gate and up clamped to swiglu_limit.
  constexpr double kGptOssGluOffset = 1.0;
  constexpr double kGptOssSwigluLimit = 7.0;
  m.glu_quick_gelu = true;
  m.glu_linear_offset = kGptOssGluOffset;
  m.glu_clamp = optional_number(j, {"swiglu_limit"}, kGptOssSwigluLimit);
  std::vector<std::string> types;
  if (has(j, "layer_types")) {
    types = string_list(j, "layer_types");
  } else if (m.layers > 0 && m.layers <= 1'000'000) {  // transformers' default: alternate
    for (std::int64_t i = 0; i < m.layers; ++i)
      types.emplace_back((i + 1) % 2 ? "sliding_attention" : "full_attention");
  }
  if (alternates_windowed(types, "sliding_attention", m.layers))
    set_windowed(m, optional_int(j, {"sliding_window"}, 128));
  return m;
}

// Llama 4 (transformers Llama4TextConfig; Llama4ForConditionalGeneration nests it under
// text_config, whose vision encoder and projector are not imported): routed experts and one
// shared expert of intermediate_size, dense layers of intermediate_size_mlp, a bias-free router
// with sigmoid scores. Its QK norm is a weightless L2 norm (use_qk_norm), so qk_norm stays off:
// it adds no parameters and its FLOPs are memory-bound.
ModelSpec read_llama4(const Json& config) {
  const bool nested = has(config, "text_config");
  if (nested) json_fields::require_object(config.at("text_config"), field("text_config"));
  const Json& j = nested ? config.at("text_config") : config;
  const bool tie_default = optional_bool(config, "tie_word_embeddings", false);
  ModelSpec m = read_llama_style(j, tie_default, 0);
  m.moe.experts = require_experts(j, {"num_local_experts"});
  m.moe.top_k = optional_int(j, {"num_experts_per_tok"}, 1);
  m.moe.expert_ffn_hidden = require_int(j, {"intermediate_size"});
  m.moe.shared_experts = 1;  // Llama4TextMoe.shared_expert, always present
  m.moe.scoring = RouterScoring::sigmoid;
  set_llama4_moe_layers(j, m);
  m.ffn_hidden = m.dense_mlp_layers() > 0 ? require_int(j, {"intermediate_size_mlp"}) : 0;
  set_llama_biases(j, m);
  return m;
}

}  // namespace

std::vector<std::string> supported_hf_architectures() {
  std::vector<std::string> names;
  for (const auto& a : kArchitectures)
    if (a.listed) names.emplace_back(a.architecture);
  return names;
}

namespace {

// HF rope_scaling (transformers modeling_rope_utils.py): "llama3" (Llama 3.1), "yarn"
// (DeepSeek-V3, GPT-OSS; older configs say "type"), "linear" (Gemma-3). "default" is none.
RopeScaling read_rope_scaling(const Json& r) {
  RopeScaling out;
  const std::string type = optional_string(r, {"rope_type", "type"}, "default");
  if (type == "default") return out;
  out.factor = optional_number(r, {"factor"}, 1.0);
  out.original_max_positions = optional_int(r, {"original_max_position_embeddings"}, 0);
  if (type == "llama3") {
    out.kind = RopeScalingKind::llama3;
    out.low_freq_factor = optional_number(r, {"low_freq_factor"}, out.low_freq_factor);
    out.high_freq_factor = optional_number(r, {"high_freq_factor"}, out.high_freq_factor);
  } else if (type == "yarn") {
    out.kind = RopeScalingKind::yarn;
    out.beta_fast = optional_number(r, {"beta_fast"}, out.beta_fast);
    out.beta_slow = optional_number(r, {"beta_slow"}, out.beta_slow);
    out.mscale = optional_number(r, {"mscale"}, out.mscale);
    out.mscale_all_dim = optional_number(r, {"mscale_all_dim"}, out.mscale_all_dim);
  } else if (type == "linear") {
    out.kind = RopeScalingKind::linear;
  } else {
    throw Error(field("rope_scaling.rope_type"), "unsupported RoPE scaling '" + type + "'",
                "default, llama3, yarn, linear");
  }
  return out;
}

// RoPE theta, RoPE scaling and the norm epsilon, under each family's key names.
void read_rope_and_norm(const Json& j, ModelSpec& m) {
  m.rope_base = optional_number(j, {"rope_theta", "rotary_emb_base"}, m.rope_base);
  m.norm_eps = optional_number(
      j, {"rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "norm_epsilon"}, m.norm_eps);
  if (has(j, "rope_scaling") && j.at("rope_scaling").is_object())
    m.rope_scaling = read_rope_scaling(j.at("rope_scaling"));
}

// Gemma-2 / Gemma-3 windowed layers: which layers are global. Gemma-2 alternates (transformers
// Gemma2DecoderLayer: layer i slides when i is even); Gemma-3 has sliding_window_pattern - 1
// local layers per global one (Gemma3Config default 6). Newer configs list layer_types; the list
// must be that periodic pattern, else the model is counted with full attention everywhere.
void set_gemma_windows(const Json& j, std::int64_t default_period, ModelSpec& m) {
  const std::int64_t period = optional_int(j, {"sliding_window_pattern"}, default_period);
  if (period < 2 || !loopable(m.layers)) return;
  if (has(j, "layer_types")) {
    const auto types = string_list(j, "layer_types");
    if (static_cast<std::int64_t>(types.size()) != m.layers) return;
    for (std::int64_t i = 0; i < m.layers; ++i)
      if ((types[i] == "full_attention") != ((i + 1) % period == 0)) return;
  }
  set_windowed(m, optional_int(j, {"sliding_window"}, 4096));
  m.swa_global_every = period;
}

// Gemma-2 (transformers Gemma2Config) and Gemma-3's text model (Gemma3TextConfig; the
// Gemma3ForConditionalGeneration checkpoint nests it under text_config, whose SigLIP encoder is
// not imported). GeGLU with gelu_pytorch_tanh counts as swiglu (three matrices); head_dim is
// explicit (Gemma-2-9B: 256 x 16 heads on a 3584 hidden). Gemma-2 soft-caps attention scores
// (50) and final logits (30); Gemma-3 drops the caps for q/k RMSNorm over head_dim. Each layer
// has four norms (pre/post attention, pre/post MLP), two more than ModelSpec counts (2 x hidden
// parameters per layer, < 0.01% of the model); the sqrt(hidden) embedding scale is elementwise.
ModelSpec read_gemma(const Json& config, Arch arch) {
  const bool nested = has(config, "text_config");
  if (nested) json_fields::require_object(config.at("text_config"), field("text_config"));
  const Json& j = nested ? config.at("text_config") : config;
  ModelSpec m = read_llama_style(j, optional_bool(config, "tie_word_embeddings", true), 256);
  m.ffn_hidden = require_int(j, {"intermediate_size"});
  m.attention_logit_softcap = optional_number(j, {"attn_logit_softcapping"}, 0.0);
  m.final_logit_softcap = optional_number(j, {"final_logit_softcapping"}, 0.0);
  m.query_pre_attn_scalar = optional_number(j, {"query_pre_attn_scalar"}, 0.0);
  const bool gemma3 = arch == Arch::gemma3;
  m.qk_norm = gemma3;  // Gemma3Attention: q_norm, k_norm over head_dim
  constexpr std::int64_t kGemma2Period = 2;
  constexpr std::int64_t kGemma3Period = 6;
  set_gemma_windows(j, gemma3 ? kGemma3Period : kGemma2Period, m);
  set_llama_biases(j, m);
  return m;
}

}  // namespace

// Trained with dropout when any of the architectures' dropout keys is positive (GPT-2
// resid_pdrop, OPT dropout, BLOOM/NeoX hidden_dropout, Llama attention_dropout, ...).
bool uses_dropout(const nlohmann::json& config) {
  for (const char* key : {"resid_pdrop", "embd_pdrop", "attn_pdrop", "dropout", "hidden_dropout",
                          "attention_dropout", "hidden_dropout_prob", "attention_probs_dropout_prob"}) {
    if (config.contains(key) && config.at(key).is_number() && config.at(key).get<double>() > 0.0)
      return true;
  }
  return false;
}

namespace {
constexpr const char* kUnnamedModel = "hf-model";
constexpr std::string_view kHubSnapshots = "snapshots";
constexpr std::string_view kHubRepositoryPrefix = "models--";  // models--ORG--NAME
constexpr std::string_view kHubSeparator = "--";

// A path's last component, trailing separators ignored; "" for none (".", "..", "/").
std::string last_component(std::string text) {
  while (!text.empty() && (text.back() == '/' || text.back() == '\\')) text.pop_back();
  const auto slash = text.find_last_of("/\\");
  std::string last = slash == std::string::npos ? text : text.substr(slash + 1);
  return last == "." || last == ".." ? "" : last;
}

// The folder that names a config.json: its own, or in a hub cache the repository it snapshots.
std::string config_folder_name(const std::filesystem::path& file) {
  const std::filesystem::path folder = std::filesystem::absolute(file).lexically_normal().parent_path();
  const std::string repository = folder.parent_path().parent_path().filename().string();
  if (folder.parent_path().filename() == kHubSnapshots && repository.starts_with(kHubRepositoryPrefix))
    return repository.substr(repository.rfind(kHubSeparator) + kHubSeparator.size());
  return folder.filename().string();
}
}  // namespace

std::string hf_model_name(const nlohmann::json& config, const std::string& path) {
  if (config.is_object() && has(config, "_name_or_path")) {
    const std::string name = last_component(json_fields::get_string(config, "_name_or_path", kPath));
    if (!name.empty()) return name;
  }
  const std::filesystem::path file(path);
  std::string name = file.filename() == "config.json" ? config_folder_name(file) : file.stem().string();
  return name.empty() ? kUnnamedModel : name;
}

ModelSpec model_from_hf_config(const nlohmann::json& config, const std::string& name) {
  json_fields::require_object(config, kPath);
  const Arch arch = resolve_architecture(config);
  ModelSpec m;
  switch (arch) {
    case Arch::llama:
    case Arch::mistral:
    case Arch::qwen2:
    case Arch::qwen3:
    case Arch::gemma:
    case Arch::phi3:
    case Arch::nemotron: m = read_llama_family(config, arch); break;
    case Arch::mixtral: m = read_mixtral(config); break;
    case Arch::qwen2_moe:
    case Arch::qwen3_moe: m = read_qwen_moe(config, arch); break;
    case Arch::deepseek_v2:
    case Arch::deepseek_v3: m = read_deepseek(config, arch); break;
    case Arch::gpt_oss: m = read_gpt_oss(config); break;
    case Arch::gpt2: m = read_gpt2(config); break;
    case Arch::gpt_neo: m = read_gpt_neo(config); break;
    case Arch::gpt_neox: m = read_gpt_neox(config); break;
    case Arch::opt: m = read_opt(config); break;
    case Arch::bloom: m = read_bloom(config); break;
    case Arch::falcon: m = read_falcon(config); break;
    case Arch::llama4: m = read_llama4(config); break;
    case Arch::gemma2:
    case Arch::gemma3: m = read_gemma(config, arch); break;
  }
  const bool nested = has(config, "text_config") && config.at("text_config").is_object();
  const Json& text = nested ? config.at("text_config") : config;
  read_rope_and_norm(text, m);
  // Mixtral, Qwen-MoE, GPT-OSS, Llama 4: the batch-level load-balancing loss coefficient.
  if (m.is_moe() && m.moe.aux_loss_coeff == 0.0)
    m.moe.aux_loss_coeff = optional_number(text, {"router_aux_loss_coef"}, 0.0);
  m.name = name;
  m.dropout = uses_dropout(config);
  m.validate();
  return m;
}

}  // namespace tessera
