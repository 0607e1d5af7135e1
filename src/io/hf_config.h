// Hugging Face config.json -> ModelSpec for the common decoder-only architectures
// (LlamaForCausalLM, MistralForCausalLM, MixtralForCausalLM, Qwen2ForCausalLM,
// Qwen2MoeForCausalLM, GPT2LMHeadModel, GPTNeoXForCausalLM, ...). An architecture it does not
// know is Error("model.architectures", ...) naming it and listing the supported ones.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "model/model_spec.h"

namespace tessera {

ModelSpec model_from_hf_config(const nlohmann::json& config, const std::string& name);

}  // namespace tessera
