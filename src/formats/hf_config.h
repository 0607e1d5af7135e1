// Hugging Face config.json -> ModelSpec for the common decoder-only architectures.
//
// Supported `architectures` (or, when that list is absent, the matching `model_type`):
//   LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM, Qwen2ForCausalLM,
//   Qwen2MoeForCausalLM, Qwen3ForCausalLM, Qwen3MoeForCausalLM, GemmaForCausalLM,
//   Gemma2ForCausalLM, Gemma3ForCausalLM, Gemma3ForConditionalGeneration (its text_config),
//   Phi3ForCausalLM, NemotronForCausalLM, DeepseekV2ForCausalLM, DeepseekV3ForCausalLM,
//   GptOssForCausalLM, GPT2LMHeadModel, GPTNeoForCausalLM, GPTNeoXForCausalLM, OPTForCausalLM,
//   BloomForCausalLM, FalconForCausalLM (and the older RWForCausalLM name),
//   Llama4ForConditionalGeneration (its text_config), Llama4ForCausalLM.
//
// MoE layer patterns (DeepSeek first_k_dense_replace / moe_layer_freq, Qwen decoder_sparse_step /
// mlp_only_layers, Llama 4 interleave_moe_layer_step / moe_layers) map exactly onto
// moe.dense_layers + moe.layer_freq; a pattern that is not "k dense layers, then every n-th layer
// MoE" is an Error naming the key that made it (e.g. "model.mlp_only_layers").
// DeepSeek-V3 also maps num_nextn_predict_layers (mtp_layers), scoring_func, n_group / topk_group
// and e_score_correction_bias (topk_method noaux_tc: router_bias); Qwen3 sets qk_norm.
// Every family: rope_theta (rope_base), rope_scaling (llama3 / yarn / linear), the norm epsilon
// (rms_norm_eps, layer_norm_eps, layer_norm_epsilon); GPT-OSS's clamped quick-GELU GLU
// (swiglu_limit); Gemma-2/3 soft-capping, query_pre_attn_scalar, explicit head_dim and the
// sliding-window pattern (swa_global_every).
//
// Errors (all tessera::Error):
//   - an architecture it does not know: field "model.architectures", listing the supported ones;
//   - a key that fixes the model's size missing or of the wrong type: the Hugging Face key,
//     e.g. "model.hidden_size" (GPT-2's "model.n_embd");
//   - zero, negative or inconsistent values: ModelSpec::validate() on the mapped field
//     ("model.layers", "model.kv_heads", "model.moe.top_k", ...).
// Keys with a neutral or documented default in transformers (tie_word_embeddings, biases,
// num_key_value_heads, head_dim, GPT-2's n_inner, ...) take that architecture's default.
//
// What a ModelSpec cannot say is approximated and documented next to each architecture in
// hf_config.cpp (e.g. OPT's ReLU MLP is counted as the 2-matrix "gelu" MLP, a sliding window
// on every layer is treated as full attention).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/model_spec.h"

namespace tessera {

// `name` becomes ModelSpec::name. The result has passed ModelSpec::validate().
ModelSpec model_from_hf_config(const nlohmann::json& config, const std::string& name);

// The name a config.json's model goes by in every report (issue 32: reports of several models
// must be told apart), one rule whatever the source:
//   1. "_name_or_path", its last path component ("meta-llama/Llama-2-7b-hf" -> "Llama-2-7b-hf");
//   2. else the file at `path`: a "config.json" is named by its folder, and in a Hugging Face hub
//      cache (models--ORG--NAME/snapshots/HASH/config.json) by the repository's NAME;
//   3. else any other file by its stem ("llama-2-7b.json" -> "llama-2-7b").
// "hf-model" only when none gives a name. A "_name_or_path" that is not a string is an
// Error("model._name_or_path").
std::string hf_model_name(const nlohmann::json& config, const std::string& path);

// The `architectures` names model_from_hf_config accepts, in the order listed above.
std::vector<std::string> supported_hf_architectures();

}  // namespace tessera
