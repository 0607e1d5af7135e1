#include "export/megatron_model_flags.h"

#include <cmath>

#include <fmt/core.h>

#include "core/error.h"

namespace tessera {

namespace {

// Megatron's default --make-vocab-size-divisible-by (arguments.py).
constexpr std::int64_t kMegatronVocabDivisor = 128;
// Megatron's llama3 RoPE scaling is fixed: gpt_builders.py passes only --use-rope-scaling, and
// RotaryEmbedding._apply_scaling uses factor 8, low 1, high 4, original 8192
// (megatron/core/models/common/embeddings/rotary_pos_embedding.py).
constexpr double kMegatronLlama3Factor = 8.0;
constexpr double kMegatronLlama3LowFreq = 1.0;
constexpr double kMegatronLlama3HighFreq = 4.0;
constexpr std::int64_t kMegatronLlama3Original = 8192;
// MLATransformerConfig's YaRN defaults, which have no command-line flag (only
// --rotary-scaling-factor, --mscale, --mscale-all-dim do): transformer_config.py.
constexpr std::int64_t kMlaYarnOriginal = 4096;
constexpr double kMlaYarnBetaFast = 32.0;
constexpr double kMlaYarnBetaSlow = 1.0;

// Megatron's --moe-layer-freq as an explicit per-layer list (1 = MoE). Megatron's integer form N
// puts the MoE layer first in each group of N (layer i is MoE when i % N == 0,
// gpt_layer_specs.py), Tessera's layer_freq the last (Llama 4's interleave_moe_layer_step), and
// leading dense layers have no integer form at all.
std::string moe_layer_pattern(const ModelSpec& m) {
  std::string list = "[";
  for (std::int64_t i = 0; i < m.layers; ++i) {
    if (i > 0) list += ',';
    list += m.is_moe_layer(i) ? '1' : '0';
  }
  return list + "]";
}

// --rotary-base is an int in arguments.py.
std::int64_t rotary_base(const ModelSpec& m) {
  const double rounded = std::round(m.rope_base);
  if (rounded != m.rope_base)
    throw Error("model.rope_base", "Megatron's --rotary-base takes an integer", "an integer RoPE theta");
  return static_cast<std::int64_t>(rounded);
}

void add_position_embedding(std::vector<std::string>& a, const ModelSpec& m) {
  if (m.position == PositionEmbedding::alibi)
    throw Error("model.position", "Megatron-LM has no ALiBi position embedding (d98e8a64)", "rope or learned");
  if (m.position == PositionEmbedding::learned) {
    add_flag(a, "--position-embedding-type", "learned_absolute");
    return;
  }
  const RopeScaling& r = m.rope_scaling;
  const bool yarn = r.kind == RopeScalingKind::yarn;
  // MLA keeps --position-embedding-type rope and picks the rotary kind with --rope-type (MLA
  // only); other attention takes YaRN as --position-embedding-type yarn (gpt_model.py).
  add_flag(a, "--position-embedding-type", yarn && m.attention != AttentionKind::mla ? "yarn" : "rope");
  add_flag(a, "--rotary-base", rotary_base(m));
  if (m.attention == AttentionKind::mla) add_flag(a, "--rope-type", yarn ? "yarn" : "rope");
  switch (r.kind) {
    case RopeScalingKind::none: break;
    case RopeScalingKind::llama3:
      if (r.factor != kMegatronLlama3Factor || r.low_freq_factor != kMegatronLlama3LowFreq ||
          r.high_freq_factor != kMegatronLlama3HighFreq || r.original_max_positions != kMegatronLlama3Original)
        throw Error("model.rope_scaling", "Megatron's llama3 RoPE scaling is fixed at factor 8, low 1, high 4, original 8192",
                    "that scaling, or none");
      a.emplace_back("--use-rope-scaling");
      add_flag(a, "--rope-scaling-factor", r.factor);
      break;
    case RopeScalingKind::yarn:
      add_flag(a, "--rotary-scaling-factor", r.factor);
      add_flag(a, "--mscale", r.mscale);
      add_flag(a, "--mscale-all-dim", r.mscale_all_dim);
      if (m.attention == AttentionKind::mla) {
        if (r.original_max_positions != kMlaYarnOriginal || r.beta_fast != kMlaYarnBetaFast || r.beta_slow != kMlaYarnBetaSlow)
          throw Error("model.rope_scaling", "Megatron's MLA YaRN has no flags for the original context or betas (fixed 4096, 32, 1)",
                      "original_max_positions 4096, beta_fast 32, beta_slow 1");
      } else {
        add_flag(a, "--yarn-original-max-position-embeddings", r.original_max_positions);
        add_flag(a, "--yarn-beta-fast", r.beta_fast);
        add_flag(a, "--yarn-beta-slow", r.beta_slow);
      }
      break;
    case RopeScalingKind::linear: {
      const double factor = std::round(r.factor);
      if (factor != r.factor)
        throw Error("model.rope_scaling.factor", "Megatron's --rotary-seq-len-interpolation-factor takes an integer",
                    "an integer factor");
      add_flag(a, "--rotary-seq-len-interpolation-factor", static_cast<std::int64_t>(factor));
      break;
    }
  }
}

void add_activation(std::vector<std::string>& a, const ModelSpec& m) {
  if (m.mlp == MlpType::relu2) a.emplace_back("--squared-relu");
  if (m.mlp != MlpType::swiglu) return;  // gelu is Megatron's default activation
  // GPT-OSS: Megatron's quick-GELU GLU with a linear offset and a clamp (argument_utils.py
  // --quick-geglu; TransformerConfig glu_linear_offset, activation_func_clamp_value), as in
  // Megatron's examples/post_training/modelopt/conf/openai/gpt-oss-120b.sh.
  if (m.glu_quick_gelu) {
    a.emplace_back("--quick-geglu");
    if (m.glu_linear_offset != 0) add_flag(a, "--glu-linear-offset", m.glu_linear_offset);
  } else {
    a.emplace_back("--swiglu");
  }
  if (m.glu_clamp > 0) add_flag(a, "--activation-func-clamp-value", m.glu_clamp);
}

void add_attention(std::vector<std::string>& a, const ModelSpec& m) {
  add_flag(a, "--num-attention-heads", m.heads);
  if (m.attention_logit_softcap > 0 || m.final_logit_softcap > 0)
    throw Error("model.attention_logit_softcap", "Megatron-LM has no logit soft-capping flag (d98e8a64)",
                "0 (no soft-capping)");
  if (m.attention == AttentionKind::mla) {
    a.emplace_back("--multi-latent-attention");
    if (m.mla.q_lora_rank > 0) add_flag(a, "--q-lora-rank", m.mla.q_lora_rank);
    add_flag(a, "--kv-lora-rank", m.mla.kv_lora_rank);
    add_flag(a, "--qk-head-dim", m.mla.qk_nope_head_dim);
    add_flag(a, "--qk-pos-emb-head-dim", m.mla.qk_rope_head_dim);
    add_flag(a, "--v-head-dim", m.mla.v_head_dim);
  } else {
    if (m.kv_heads != m.heads) {
      a.emplace_back("--group-query-attention");
      add_flag(a, "--num-query-groups", m.kv_heads);
    }
    add_flag(a, "--kv-channels", m.head_dim);
  }
  if (m.query_pre_attn_scalar > 0 && m.query_pre_attn_scalar != static_cast<double>(m.head_dim))
    add_flag(a, "--softmax-scale", 1.0 / std::sqrt(m.query_pre_attn_scalar));
  if (m.qk_norm) a.emplace_back("--qk-layernorm");
  // GPT-OSS's per-head learned sink logit is Megatron's learnable softmax offset.
  if (m.attention_sinks) add_flag(a, "--softmax-type", "learnable");
  if (m.attention == AttentionKind::gqa_swa) {
    // TE's window (left, right) counts the keys before the query: a window of W tokens including
    // itself is (W - 1, 0); one full-attention layer per swa_global_every (--window-attn-skip-freq
    // N: N - 1 windowed layers, then a full one), as the gpt-oss example writes 127,0 and 2.
    a.emplace_back("--window-size");
    a.push_back(fmt::format("{},0", m.sliding_window - 1));
    add_flag(a, "--window-attn-skip-freq", m.swa_global_every);
  }
}

void add_moe(std::vector<std::string>& a, const ModelSpec& m) {
  add_flag(a, "--num-experts", m.moe.experts);
  add_flag(a, "--moe-router-topk", m.moe.top_k);
  add_flag(a, "--moe-ffn-hidden-size", m.moe.expert_ffn_hidden);
  if (m.moe.shared_experts > 0)
    add_flag(a, "--moe-shared-expert-intermediate-size", m.moe.shared_experts * m.moe.expert_ffn_hidden);
  if (m.moe.dense_layers > 0 || m.moe.layer_freq > 1) add_flag(a, "--moe-layer-freq", moe_layer_pattern(m).c_str());
  // Tessera costs grouped expert GEMMs; Megatron also needs them to recompute moe_act.
  a.emplace_back("--moe-grouped-gemm");
  // fp32 routing: TransformerConfig warns without it from 32 experts on.
  add_flag(a, "--moe-router-dtype", "fp32");
  if (m.moe.scoring == RouterScoring::sigmoid) add_flag(a, "--moe-router-score-function", "sigmoid");
  // TransformerConfig: "Please use --moe-router-pre-softmax when topk is 1" (softmax scoring).
  if (m.moe.top_k == 1 && m.moe.scoring == RouterScoring::softmax) a.emplace_back("--moe-router-pre-softmax");
  if (m.moe.groups > 0) {
    add_flag(a, "--moe-router-num-groups", m.moe.groups);
    add_flag(a, "--moe-router-group-topk", m.moe.topk_groups);
  }
  // With sigmoid scores the router bias is DeepSeek-V3's aux-loss-free expert bias (§2.1.2),
  // which Megatron allows only with sigmoid (or sqrtsoftplus) scores; with softmax it is a bias on
  // the router's logits (GPT-OSS), which Megatron's router adds with the linear biases
  // (router.py: a bias when add_bias_linear).
  if (m.moe.router_bias && m.moe.scoring == RouterScoring::sigmoid) a.emplace_back("--moe-router-enable-expert-bias");
  if (m.moe.topk_scaling > 0) add_flag(a, "--moe-router-topk-scaling-factor", m.moe.topk_scaling);
  if (m.moe.aux_loss_coeff > 0) {
    add_flag(a, "--moe-router-load-balancing-type", m.moe.sequence_aux_loss ? "seq_aux_loss" : "aux_loss");
    add_flag(a, "--moe-aux-loss-coeff", m.moe.aux_loss_coeff);
  } else {
    add_flag(a, "--moe-router-load-balancing-type", "none");
  }
}

}  // namespace

std::int64_t megatron_padded_vocab(std::int64_t vocab, std::int64_t tp) { return (vocab + tp - 1) / tp * tp; }

std::int64_t megatron_vocab_divisor(std::int64_t vocab, std::int64_t tp) {
  vocab = megatron_padded_vocab(vocab, tp);
  std::int64_t divisor = kMegatronVocabDivisor;
  while (divisor > 1 && vocab % (divisor * tp) != 0) divisor /= 2;
  return divisor;
}

std::vector<std::string> megatron_model_flags(const ModelSpec& m, std::int64_t tp, std::int64_t seq_len) {
  std::vector<std::string> a;
  add_flag(a, "--num-layers", m.layers);
  add_flag(a, "--hidden-size", m.hidden);
  // Every layer MoE: Megatron still reads ffn_hidden_size (its default is 4h); the expert width.
  add_flag(a, "--ffn-hidden-size", m.ffn_hidden > 0 ? m.ffn_hidden : m.moe.expert_ffn_hidden);
  add_attention(a, m);
  if (m.position == PositionEmbedding::learned && seq_len > m.max_context)
    throw Error("seq", fmt::format("{} is longer than the learned position table ({})", seq_len, m.max_context),
                "at most the model's context");
  // arguments.py: max_position_embeddings must cover seq_length; only learned tables have a size.
  add_flag(a, "--max-position-embeddings", std::max(m.max_context, seq_len));
  // Megatron pads the tokenizer's vocabulary to a multiple of divisor x tp unless
  // --padded-vocab-size is given; both are set so the embedding has the model's rows, rounded up
  // to a multiple of tp where tp does not divide them (GPT-3's 50257: at most tp - 1 rows more;
  // the vocab-parallel embedding splits rows evenly, tensor_parallel/utils.py).
  add_flag(a, "--padded-vocab-size", megatron_padded_vocab(m.vocab, tp));
  add_flag(a, "--make-vocab-size-divisible-by", megatron_vocab_divisor(m.vocab, tp));
  add_activation(a, m);
  add_flag(a, "--normalization", m.norm == NormType::rmsnorm ? "RMSNorm" : "LayerNorm");
  add_flag(a, "--norm-epsilon", m.norm_eps);
  add_position_embedding(a, m);
  if (!m.tied_embeddings) a.emplace_back("--untie-embeddings-and-output-weights");
  if (m.embedding_norm)
    throw Error("model.embedding_norm", "Megatron-LM has no norm after the embedding (BLOOM)", "false");
  if (!m.linear_bias) a.emplace_back("--disable-bias-linear");
  if (m.qkv_bias && !m.linear_bias) a.emplace_back("--add-qkv-bias");
  if (!m.dropout) a.insert(a.end(), {"--attention-dropout", "0", "--hidden-dropout", "0"});
  if (m.is_moe()) add_moe(a, m);
  if (m.mtp_layers > 0) add_flag(a, "--mtp-num-layers", m.mtp_layers);
  return a;
}

void add_flag(std::vector<std::string>& out, const char* flag, std::int64_t value) {
  out.emplace_back(flag);
  out.push_back(std::to_string(value));
}
void add_flag(std::vector<std::string>& out, const char* flag, double value) {
  out.emplace_back(flag);
  out.push_back(fmt::format("{}", value));
}
void add_flag(std::vector<std::string>& out, const char* flag, const char* value) {
  out.emplace_back(flag);
  out.emplace_back(value);
}

}  // namespace tessera
