// ModelSpec: the architecture of a decoder-only transformer (dense, GQA, SwiGLU, MoE, MLA).
// A plain value type: build it, call validate() once, then trust it everywhere.
#pragma once

#include <cstdint>
#include <string>

namespace tessera {

enum class MlpType { gelu, swiglu, relu2 };
enum class AttentionKind { mha, gqa, gqa_swa, mla };
enum class NormType { layernorm, rmsnorm };
enum class PositionEmbedding { learned, rope, alibi };
// How the router turns logits into expert scores: softmax (Mixtral, Qwen) or per-expert sigmoid
// (DeepSeek-V3 §2.1.2, Megatron --moe-router-score-function sigmoid).
enum class RouterScoring { softmax, sigmoid };

// RoPE frequency scaling for a context longer than the one pre-trained at: Llama 3.1's "llama3"
// rule (HF rope_scaling rope_type "llama3": factor, low/high frequency factors, original context)
// YaRN (arXiv 2309.00071; DeepSeek-V3, GPT-OSS, Qwen long-context configs), or linear position
// interpolation (HF rope_type "linear": positions divided by the factor; Gemma-3's global layers).
enum class RopeScalingKind { none, llama3, yarn, linear };
struct RopeScaling {
  RopeScalingKind kind = RopeScalingKind::none;
  double factor = 1.0;
  std::int64_t original_max_positions = 0;  // the pre-training context the factor extends
  double low_freq_factor = 1.0;             // llama3
  double high_freq_factor = 4.0;            // llama3
  double beta_fast = 32.0;                  // yarn
  double beta_slow = 1.0;                   // yarn
  double mscale = 1.0;                      // yarn (DeepSeek's attention-temperature terms)
  double mscale_all_dim = 0.0;              // yarn
};

// Mixture of experts. experts == 0 means a dense model.
struct MoeSpec {
  std::int64_t experts = 0;            // routed experts per MoE layer
  std::int64_t top_k = 0;              // routed experts per token
  std::int64_t expert_ffn_hidden = 0;  // intermediate width of one expert
  std::int64_t shared_experts = 0;     // always-active experts, each expert_ffn_hidden wide
  std::int64_t dense_layers = 0;       // leading layers with a dense MLP of ffn_hidden
  // After the leading dense layers, one layer in every `layer_freq` is MoE, the last of each group
  // (Llama 4's interleave_moe_layer_step: layers 1, 3, 5, ... with 2); the others are dense MLPs of
  // ffn_hidden. 1 = every layer after the leading dense ones.
  std::int64_t layer_freq = 1;
  bool router_bias = false;
  RouterScoring scoring = RouterScoring::softmax;
  // Group-limited routing (DeepSeek-V3 §2.1.2: 8 groups, top-4 groups): 0 = not grouped.
  std::int64_t groups = 0;
  std::int64_t topk_groups = 0;
  // Load balancing as trained: the auxiliary loss coefficient (0 = none; HF router_aux_loss_coef,
  // DeepSeek aux_loss_alpha), computed per sequence (DeepSeek-V3 §2.1.2's complementary
  // sequence-wise loss) or per batch; and the routed weights' scale (HF routed_scaling_factor,
  // 0 = not scaled).
  double aux_loss_coeff = 0.0;
  bool sequence_aux_loss = false;
  double topk_scaling = 0.0;
};

// Multi-head latent attention (DeepSeek-V2/V3): low-rank Q and joint KV compression.
// Only read when attention == mla. Source: DeepSeek-V3 report (arXiv 2412.19437) §2.1.1.
struct MlaSpec {
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
};

struct ModelSpec {
  std::string name;
  std::int64_t layers = 0;
  std::int64_t hidden = 0;
  std::int64_t ffn_hidden = 0;  // dense MLP width (0 if every layer is MoE)
  std::int64_t heads = 0;       // query heads
  std::int64_t kv_heads = 0;    // key/value heads (== heads for MHA)
  std::int64_t head_dim = 0;    // per-head width
  std::int64_t vocab = 0;
  std::int64_t max_context = 0;
  MlpType mlp = MlpType::gelu;
  AttentionKind attention = AttentionKind::mha;
  NormType norm = NormType::layernorm;
  PositionEmbedding position = PositionEmbedding::learned;
  bool tied_embeddings = true;
  bool linear_bias = false;      // every linear layer has a bias (GPT-2/3, OPT, BLOOM)
  bool qkv_bias = false;         // only Q/K/V have biases (Qwen2)
  bool embedding_norm = false;   // a norm right after the embedding (BLOOM)
  bool attention_sinks = false;  // one learned sink logit per head per layer (GPT-OSS)
  bool dropout = false;          // hidden and attention dropout in training (GPT-3 era Megatron: 0.1)
  std::int64_t sliding_window = 0;  // gqa-swa: window of the local layers (every other layer)
  bool qk_norm = false;             // RMSNorm on each head's query and key (Qwen3)
  // Multi-token prediction modules after the last layer (DeepSeek-V3 §2.2, HF
  // num_nextn_predict_layers): each is an embedding-norm pair, a 2h -> h projection and one
  // transformer layer of the model's last-layer kind, sharing the embedding and output head.
  std::int64_t mtp_layers = 0;
  // With gqa-swa, every n-th layer attends over the whole context, the others over the window
  // (GPT-OSS and Gemma-2 alternate: 2; Gemma-3 has 5 local layers per global one: 6).
  std::int64_t swa_global_every = 2;
  double rope_base = 10000.0;  // RoPE theta (HF rope_theta; Llama 3 500000, Qwen2.5 1e6)
  RopeScaling rope_scaling;
  double norm_eps = 1e-5;      // HF rms_norm_eps / layer_norm_eps
  // GPT-OSS's gated MLP (HF GptOssExperts): gate * sigmoid(1.702 gate) (a quick-GELU gate, not
  // SiLU), times (up + glu_linear_offset), with gate and up clamped to glu_clamp (swiglu_limit).
  // Costs as swiglu: the same three matrices.
  bool glu_quick_gelu = false;
  double glu_linear_offset = 0.0;
  double glu_clamp = 0.0;  // 0 = not clamped
  // Gemma-2 tanh soft-capping of attention scores and of the final logits (0 = none), and its
  // query scale 1/sqrt(query_pre_attn_scalar) (0 = 1/sqrt(head_dim)). Elementwise: no parameters.
  double attention_logit_softcap = 0.0;
  double final_logit_softcap = 0.0;
  double query_pre_attn_scalar = 0.0;
  MoeSpec moe;
  MlaSpec mla;

  bool is_moe() const { return moe.experts > 1; }
  // Layer i (0-based, of the `layers` main layers) has a routed-expert MLP.
  bool is_moe_layer(std::int64_t i) const {
    if (!is_moe() || i < moe.dense_layers) return false;
    return (i - moe.dense_layers) % moe.layer_freq == moe.layer_freq - 1;
  }
  // MoE layers among main layers [begin, end); allocation-free and O(1).
  std::int64_t moe_layers_in(std::int64_t begin, std::int64_t end) const {
    if (!is_moe()) return 0;
    begin = begin < moe.dense_layers ? moe.dense_layers : begin;
    if (end <= begin) return 0;
    // j in [0, x) with j % f == f - 1 number floor(x / f); subtract the counts below each end.
    const std::int64_t f = moe.layer_freq, d = moe.dense_layers;
    return (end - d) / f - (begin - d) / f;
  }
  std::int64_t moe_layers() const { return moe_layers_in(0, layers); }
  std::int64_t dense_mlp_layers() const { return layers - moe_layers(); }

  // Throws tessera::Error naming the first invalid field.
  void validate() const;
};

const char* to_string(MlpType value);
const char* to_string(RopeScalingKind value);
RopeScalingKind parse_rope_scaling_kind(const std::string& text);  // Error("rope_scaling.type", ...)
const char* to_string(AttentionKind value);
const char* to_string(NormType value);
const char* to_string(RouterScoring value);
RouterScoring parse_router_scoring(const std::string& text);    // throws Error("moe.scoring", ...)
const char* to_string(PositionEmbedding value);
MlpType parse_mlp_type(const std::string& text);                // throws Error("mlp", ...)
AttentionKind parse_attention_kind(const std::string& text);    // throws Error("attention", ...)
NormType parse_norm_type(const std::string& text);              // throws Error("norm", ...)
PositionEmbedding parse_position_embedding(const std::string& text);  // Error("position", ...)

}  // namespace tessera
