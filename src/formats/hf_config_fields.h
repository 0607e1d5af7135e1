// The typed reads every Hugging Face config.json reader shares (formats/hf_config.cpp and
// formats/hf_pre_llama_configs.cpp): integers, flags, strings and lists under alternative key names
// (the first name is the one errors cite, as "model.<key>"), and the mappings of HF terms to
// ModelSpec's (MLP type, attention kind, alternating windowed layers).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "formats/json_fields.h"
#include "model/model_spec.h"

namespace tessera::hf_config {

using json_fields::Json;
using json_fields::has;

// The path errors name: "model.<key>".
inline constexpr const char* kPath = "model";
std::string field(const char* key);

// "a or b": the key names an error cites.
std::string key_names(std::initializer_list<const char*> keys);
// The first key present, as an integer; Error(model.<first key>, "missing") when none is.
std::int64_t require_int(const Json& j, std::initializer_list<const char*> keys);
// The first key present, else `fallback`.
std::int64_t optional_int(const Json& j, std::initializer_list<const char*> keys,
                          std::int64_t fallback);
bool optional_bool(const Json& j, const char* key, bool fallback);
std::string optional_string(const Json& j, std::initializer_list<const char*> keys,
                            const std::string& fallback);
// A number, or `fallback` when every key is absent or null (HF writes "rope_scaling": null,
// "attn_logit_softcapping": null).
double optional_number(const Json& j, std::initializer_list<const char*> keys, double fallback);
// value * factor without signed overflow; an out-of-range value is returned as is so that
// validate() rejects the field it came from.
std::int64_t times(std::int64_t value, std::int64_t factor);
// hidden / heads, 0 for no heads (validate() then names model.heads).
std::int64_t per_head(std::int64_t hidden, std::int64_t heads);
// The list under `key` (present); Error(model.<key>) unless every entry is a string / an exact integer.
std::vector<std::string> string_list(const Json& j, const char* key);
std::vector<std::int64_t> int_list(const Json& j, const char* key);

// Gated MLPs (SwiGLU, GeGLU) have three matrices whatever the activation; a plain MLP has two,
// and ModelSpec only tells relu2 (Nemotron) apart from the rest (GELU variants, ReLU).
MlpType mlp_type(bool gated, const std::string& activation);
// MHA when every head has its own K/V, else grouped-query attention.
AttentionKind plain_attention(const ModelSpec& m);
// ModelSpec's gqa-swa means "every other layer is windowed" (GPT-OSS, GPT-Neo). A list of layer
// types qualifies only when windowed and full layers strictly alternate; any other pattern
// (all windowed like Mistral or Phi-3, or Qwen2's upper block) is counted as full attention.
bool alternates_windowed(const std::vector<std::string>& types, const std::string& local,
                         std::int64_t layers);
// Every other layer windowed to `window` tokens.
void set_windowed(ModelSpec& m, std::int64_t window);
// A layer count that is safe to loop over; otherwise validate() reports model.layers.
bool loopable(std::int64_t layers);

}  // namespace tessera::hf_config
