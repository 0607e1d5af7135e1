#include "formats/hf_config_fields.h"

#include <limits>

#include "core/error.h"

namespace tessera::hf_config {

std::string field(const char* key) { return std::string(kPath) + "." + key; }

std::string key_names(std::initializer_list<const char*> keys) {
  std::string names;
  for (const char* k : keys) names += (names.empty() ? "" : " or ") + std::string(k);
  return names;
}

std::int64_t require_int(const Json& j, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (has(j, k)) return json_fields::get_int(j, k, kPath);
  throw Error(field(*keys.begin()), "missing",
              keys.size() > 1 ? "an integer (key " + key_names(keys) + ")" : "an integer");
}

std::int64_t optional_int(const Json& j, std::initializer_list<const char*> keys,
                          std::int64_t fallback) {
  for (const char* k : keys)
    if (has(j, k)) return json_fields::get_int(j, k, kPath);
  return fallback;
}

bool optional_bool(const Json& j, const char* key, bool fallback) {
  return json_fields::get_bool_or(j, key, kPath, fallback);
}

std::string optional_string(const Json& j, std::initializer_list<const char*> keys,
                            const std::string& fallback) {
  for (const char* k : keys)
    if (has(j, k)) return json_fields::get_string(j, k, kPath);
  return fallback;
}

// A number, or `fallback` when every key is absent or null (HF writes "rope_scaling": null,
// "attn_logit_softcapping": null).
double optional_number(const Json& j, std::initializer_list<const char*> keys, double fallback) {
  for (const char* k : keys)
    if (has(j, k) && !j.at(k).is_null()) return json_fields::get_number(j, k, kPath);
  return fallback;
}

// value * factor without signed overflow; an out-of-range value is returned as is so that
// validate() rejects the field it came from.
std::int64_t times(std::int64_t value, std::int64_t factor) {
  const std::int64_t limit = std::numeric_limits<std::int64_t>::max() / factor;
  return (value > limit || value < -limit) ? value : value * factor;
}

std::int64_t per_head(std::int64_t hidden, std::int64_t heads) {
  return heads > 0 ? hidden / heads : 0;
}

std::vector<std::string> string_list(const Json& j, const char* key) {
  const Json& v = j.at(key);
  std::vector<std::string> out;
  if (v.is_array()) {
    for (const Json& e : v) {
      if (!e.is_string()) break;
      out.push_back(e.get<std::string>());
    }
    if (out.size() == v.size()) return out;
  }
  throw Error(field(key), "expected a list of strings, got " + json_fields::excerpt(v), "a list of strings");
}

std::vector<std::int64_t> int_list(const Json& j, const char* key) {
  const Json& v = j.at(key);
  std::vector<std::int64_t> out;
  if (v.is_array()) {
    for (const Json& e : v) {
      const auto value = json_fields::exact_integer(e);  // refuses booleans and 2^63 and up
      if (!value) break;
      out.push_back(*value);
    }
    if (out.size() == v.size()) return out;
  }
  throw Error(field(key), "expected a list of integers, got " + json_fields::excerpt(v), "a list of integers");
}

// Gated MLPs (SwiGLU, GeGLU) have three matrices whatever the activation; a plain MLP has two,
// and ModelSpec only tells relu2 (Nemotron) apart from the rest (GELU variants, ReLU).
MlpType mlp_type(bool gated, const std::string& activation) {
  if (gated) return MlpType::swiglu;
  return activation == "relu2" ? MlpType::relu2 : MlpType::gelu;
}

AttentionKind plain_attention(const ModelSpec& m) {
  return m.kv_heads == m.heads ? AttentionKind::mha : AttentionKind::gqa;
}

// ModelSpec's gqa-swa means "every other layer is windowed" (GPT-OSS, GPT-Neo). A list of layer
// types qualifies only when windowed and full layers strictly alternate; any other pattern
// (all windowed like Mistral or Phi-3, or Qwen2's upper block) is counted as full attention.
bool alternates_windowed(const std::vector<std::string>& types, const std::string& local,
                         std::int64_t layers) {
  if (types.empty() || static_cast<std::int64_t>(types.size()) != layers) return false;
  bool any_local = false;
  for (std::size_t i = 0; i < types.size(); ++i) {
    any_local = any_local || types[i] == local;
    if (i > 0 && (types[i] == local) == (types[i - 1] == local)) return false;
  }
  return any_local;
}

void set_windowed(ModelSpec& m, std::int64_t window) {
  m.attention = AttentionKind::gqa_swa;
  m.sliding_window = window;
}

// A layer count that is safe to loop over; otherwise validate() reports model.layers.
bool loopable(std::int64_t layers) { return layers >= 1 && layers <= 1'000'000; }

}  // namespace tessera::hf_config
