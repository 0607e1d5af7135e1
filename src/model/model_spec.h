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

// Mixture of experts. experts == 0 means a dense model.
struct MoeSpec {
  std::int64_t experts = 0;            // routed experts per MoE layer
  std::int64_t top_k = 0;              // routed experts per token
  std::int64_t expert_ffn_hidden = 0;  // intermediate width of one expert
  std::int64_t shared_experts = 0;     // always-active experts, each expert_ffn_hidden wide
  std::int64_t dense_layers = 0;       // leading layers with a dense MLP of ffn_hidden
  bool router_bias = false;
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
  MoeSpec moe;
  MlaSpec mla;

  bool is_moe() const { return moe.experts > 1; }
  std::int64_t moe_layers() const { return is_moe() ? layers - moe.dense_layers : 0; }
  std::int64_t dense_mlp_layers() const { return layers - moe_layers(); }

  // Throws tessera::Error naming the first invalid field.
  void validate() const;
};

const char* to_string(MlpType value);
const char* to_string(AttentionKind value);
const char* to_string(NormType value);
const char* to_string(PositionEmbedding value);
MlpType parse_mlp_type(const std::string& text);                // throws Error("mlp", ...)
AttentionKind parse_attention_kind(const std::string& text);    // throws Error("attention", ...)
NormType parse_norm_type(const std::string& text);              // throws Error("norm", ...)
PositionEmbedding parse_position_embedding(const std::string& text);  // Error("position", ...)

}  // namespace tessera
