// Readers of the Hugging Face config.json families that predate Llama (GPT-2, GPT-Neo, GPT-NeoX /
// Pythia, OPT, BLOOM, Falcon): each maps its own key names to a ModelSpec. formats/hf_config.cpp
// picks the reader from the config's architecture.
#pragma once

#include "formats/hf_config_fields.h"
#include "model/model_spec.h"

namespace tessera::hf_config {

// GPT-2: Conv1D projections with biases, learned positions, LayerNorm, tied head.
ModelSpec read_gpt2(const Json& j);
// GPT-Neo: global and local (windowed) layers alternate; q/k/v have no bias but out_proj and the
// MLP do (counted as linear_bias, over by 3 * hidden per layer).
ModelSpec read_gpt_neo(const Json& j);
// GPT-NeoX / Pythia: biases everywhere, untied head, partial rotary, LayerNorm.
ModelSpec read_gpt_neox(const Json& j);
// OPT: learned positions (transformers keeps 2 extra offset rows, not counted), ReLU MLP counted
// as the 2-matrix "gelu" MLP. OPT-350m's word_embed_proj_dim (512-wide embeddings with
// project_in/out) is not representable: the embedding is counted at hidden_size.
ModelSpec read_opt(const Json& j);
// BLOOM: ALiBi, a LayerNorm after the embedding, biases everywhere, 4h GELU MLP, tied head.
// It has no position limit in its config; the training length is `seq_length` when present,
// else 2048 (every BLOOM model was trained at 2048).
ModelSpec read_bloom(const Json& j);
// Falcon: multi-query (7B) or grouped KV (new_decoder_architecture, 40B/180B), no biases by
// default, rotary unless alibi, GELU 4h MLP, tied head. The parallel-attention block of 7B has
// one LayerNorm, counted as two (hidden parameters per layer).
ModelSpec read_falcon(const Json& j);

}  // namespace tessera::hf_config
