#include "formats/hf_pre_llama_configs.h"

#include <cstdint>
#include <string>
#include <vector>

#include "core/error.h"
#include "formats/hf_config_fields.h"

namespace tessera::hf_config {

namespace {
// attention_types expands [pattern, repeats] into one entry per layer: bounded by 1e6, ten times
// ModelSpec's layer limit (src/model/model_spec.cpp kMaxLayers), so a hostile repeats count is
// refused before it allocates instead of after.
constexpr std::int64_t kMaxAttentionTypes = 1'000'000;
}  // namespace

// GPT-2: Conv1D projections with biases, learned positions, LayerNorm, tied head.
ModelSpec read_gpt2(const Json& j) {
  ModelSpec m;
  m.layers = require_int(j, {"n_layer", "num_hidden_layers"});
  m.hidden = require_int(j, {"n_embd", "hidden_size"});
  m.heads = require_int(j, {"n_head", "num_attention_heads"});
  m.kv_heads = m.heads;
  m.head_dim = per_head(m.hidden, m.heads);
  m.ffn_hidden = optional_int(j, {"n_inner"}, times(m.hidden, 4));
  m.vocab = require_int(j, {"vocab_size"});
  m.max_context = require_int(j, {"n_positions", "max_position_embeddings"});
  m.mlp = mlp_type(false, optional_string(j, {"activation_function"}, "gelu_new"));
  m.norm = NormType::layernorm;
  m.position = PositionEmbedding::learned;
  m.tied_embeddings = optional_bool(j, "tie_word_embeddings", true);
  m.linear_bias = true;
  m.attention = AttentionKind::mha;
  return m;
}

// GPT-Neo: global and local (windowed) layers alternate; q/k/v have no bias but out_proj and the
// MLP do (counted as linear_bias, over by 3 * hidden per layer).
ModelSpec read_gpt_neo(const Json& j) {
  ModelSpec m;
  m.layers = require_int(j, {"num_layers", "num_hidden_layers"});
  m.hidden = require_int(j, {"hidden_size"});
  m.heads = require_int(j, {"num_heads", "num_attention_heads"});
  m.kv_heads = m.heads;
  m.head_dim = per_head(m.hidden, m.heads);
  m.ffn_hidden = optional_int(j, {"intermediate_size"}, times(m.hidden, 4));
  m.vocab = require_int(j, {"vocab_size"});
  m.max_context = require_int(j, {"max_position_embeddings"});
  m.mlp = mlp_type(false, optional_string(j, {"activation_function"}, "gelu_new"));
  m.norm = NormType::layernorm;
  m.position = PositionEmbedding::learned;
  m.tied_embeddings = optional_bool(j, "tie_word_embeddings", true);
  m.linear_bias = true;
  m.attention = AttentionKind::mha;
  std::vector<std::string> types;
  if (has(j, "attention_layers")) {
    types = string_list(j, "attention_layers");
  } else if (has(j, "attention_types")) {
    // [[["global", "local"], 12]]: each pattern repeated n times.
    const Json& spec = j.at("attention_types");
    const auto bad = [&] {
      return Error(field("attention_types"), "expected [[[\"global\", \"local\"], n], ...], got " +
                                                 json_fields::to_text(spec), "a list of [pattern, repeats]");
    };
    if (!spec.is_array()) throw bad();
    for (const Json& item : spec) {
      if (!item.is_array() || item.size() != 2 || !item[0].is_array() ||
          !json_fields::exact_integer(item[1]))
        throw bad();
      const auto repeats = *json_fields::exact_integer(item[1]);
      if (repeats < 0 || repeats > kMaxAttentionTypes ||
          static_cast<std::int64_t>(item[0].size()) * repeats > kMaxAttentionTypes - static_cast<std::int64_t>(types.size()))
        throw Error(field("attention_types"), "expands to more than " + std::to_string(kMaxAttentionTypes) + " layers",
                    "patterns times repeats within the layer limit");
      for (std::int64_t r = 0; r < repeats; ++r)
        for (const Json& t : item[0]) {
          if (!t.is_string()) throw bad();
          types.push_back(t.get<std::string>());
        }
    }
  }
  if (alternates_windowed(types, "local", m.layers))
    set_windowed(m, optional_int(j, {"window_size"}, 256));
  return m;
}

// GPT-NeoX / Pythia: biases everywhere, untied head, partial rotary, LayerNorm.
ModelSpec read_gpt_neox(const Json& j) {
  ModelSpec m;
  m.layers = require_int(j, {"num_hidden_layers"});
  m.hidden = require_int(j, {"hidden_size"});
  m.heads = require_int(j, {"num_attention_heads"});
  m.kv_heads = m.heads;
  m.head_dim = per_head(m.hidden, m.heads);
  m.ffn_hidden = require_int(j, {"intermediate_size"});
  m.vocab = require_int(j, {"vocab_size"});
  m.max_context = require_int(j, {"max_position_embeddings"});
  m.mlp = mlp_type(false, optional_string(j, {"hidden_act"}, "gelu"));
  m.norm = NormType::layernorm;
  m.position = PositionEmbedding::rope;
  m.tied_embeddings = optional_bool(j, "tie_word_embeddings", false);
  m.linear_bias = optional_bool(j, "attention_bias", true);
  m.attention = AttentionKind::mha;
  return m;
}

// OPT: learned positions (transformers keeps 2 extra offset rows, not counted), ReLU MLP counted
// as the 2-matrix "gelu" MLP. OPT-350m's word_embed_proj_dim (512-wide embeddings with
// project_in/out) is not representable: the embedding is counted at hidden_size.
ModelSpec read_opt(const Json& j) {
  ModelSpec m;
  m.layers = require_int(j, {"num_hidden_layers"});
  m.hidden = require_int(j, {"hidden_size"});
  m.heads = require_int(j, {"num_attention_heads"});
  m.kv_heads = m.heads;
  m.head_dim = per_head(m.hidden, m.heads);
  m.ffn_hidden = require_int(j, {"ffn_dim"});
  m.vocab = require_int(j, {"vocab_size"});
  m.max_context = require_int(j, {"max_position_embeddings"});
  m.mlp = mlp_type(false, optional_string(j, {"activation_function"}, "relu"));
  m.norm = NormType::layernorm;
  m.position = PositionEmbedding::learned;
  m.tied_embeddings = optional_bool(j, "tie_word_embeddings", true);
  m.linear_bias = optional_bool(j, "enable_bias", true);
  m.attention = AttentionKind::mha;
  return m;
}

// BLOOM: ALiBi, a LayerNorm after the embedding, biases everywhere, 4h GELU MLP, tied head.
// It has no position limit in its config; the training length is `seq_length` when present,
// else 2048 (every BLOOM model was trained at 2048).
ModelSpec read_bloom(const Json& j) {
  ModelSpec m;
  m.layers = require_int(j, {"n_layer", "num_hidden_layers"});
  m.hidden = require_int(j, {"hidden_size", "n_embed"});
  m.heads = require_int(j, {"n_head", "num_attention_heads"});
  m.kv_heads = m.heads;
  m.head_dim = per_head(m.hidden, m.heads);
  m.ffn_hidden = times(m.hidden, 4);
  m.vocab = require_int(j, {"vocab_size"});
  m.max_context = optional_int(j, {"seq_length"}, 2048);
  m.mlp = MlpType::gelu;
  m.norm = NormType::layernorm;
  m.position = PositionEmbedding::alibi;
  m.tied_embeddings = optional_bool(j, "tie_word_embeddings", true);
  m.linear_bias = true;
  m.embedding_norm = true;
  m.attention = AttentionKind::mha;
  return m;
}

// Falcon: multi-query (7B) or grouped KV (new_decoder_architecture, 40B/180B), no biases by
// default, rotary unless alibi, GELU 4h MLP, tied head. The parallel-attention block of 7B has
// one LayerNorm, counted as two (hidden parameters per layer).
ModelSpec read_falcon(const Json& j) {
  ModelSpec m;
  m.layers = require_int(j, {"num_hidden_layers", "n_layer"});
  m.hidden = require_int(j, {"hidden_size"});
  m.heads = require_int(j, {"num_attention_heads", "n_head"});
  if (optional_bool(j, "new_decoder_architecture", false))
    m.kv_heads = optional_int(j, {"num_kv_heads"}, m.heads);
  else
    m.kv_heads = optional_bool(j, "multi_query", true) ? 1 : m.heads;
  m.head_dim = optional_int(j, {"head_dim"}, per_head(m.hidden, m.heads));
  m.ffn_hidden = optional_int(j, {"ffn_hidden_size"}, times(m.hidden, 4));
  m.vocab = require_int(j, {"vocab_size"});
  m.max_context = optional_int(j, {"max_position_embeddings"}, 2048);  // FalconConfig default
  m.mlp = mlp_type(false, optional_string(j, {"activation"}, "gelu"));
  m.norm = NormType::layernorm;
  m.position =
      optional_bool(j, "alibi", false) ? PositionEmbedding::alibi : PositionEmbedding::rope;
  m.tied_embeddings = optional_bool(j, "tie_word_embeddings", true);
  m.linear_bias = optional_bool(j, "bias", false);
  m.attention = plain_attention(m);
  return m;
}

}  // namespace tessera::hf_config
