// A LoRA / QLoRA plan (Plan::tuning) as Hugging Face PEFT and bitsandbytes configs
// (huggingface/peft 5d602fdbff04c33c1c4de55cda9d4ae1d7cb7e40): the LoraConfig keyword arguments, so
// `LoraConfig(**j)` builds the adapter Tessera priced, and for QLoRA the transformers
// BitsAndBytesConfig of the 4-bit NormalFloat base (`BitsAndBytesConfig(**j)`).
//
// Target module names are the Hugging Face Llama-family names (q_proj ... down_proj:
// LlamaForCausalLM, Mistral, Qwen2/3, Gemma), which is what plan/fine_tuning.h models.
#pragma once

#include <span>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// LoraConfig fields. Throws Error("task") for a plan that trains no adapters, Error("lora_targets")
// for MLP targets on a model whose MLP has no gate / up / down projections of those names, and
// Error("peft") if the result breaks one of PEFT's rules below.
nlohmann::json peft_lora_config(const ModelSpec& model, const Plan& plan);

// BitsAndBytesConfig fields of QLoRA's base (Dettmers et al. 2023 §3: NF4, double quantization,
// bf16 compute). Throws Error("task") unless the task is qlora.
nlohmann::json bitsandbytes_config(const Plan& plan);

// What `--emit peft` writes: {"lora_config": ..., "bnb_config": ...} (bnb_config for qlora only).
nlohmann::json peft_export(const ModelSpec& model, const Plan& plan);

// PEFT's checks on a LoraConfig, as a table (sources at the commit above).
struct PeftRule {
  const char* id;
  const char* source;
  bool (*violated)(const nlohmann::json& lora_config);
  const char* message;
};
std::span<const PeftRule> peft_lora_rules();
std::vector<const PeftRule*> peft_lora_violations(const nlohmann::json& lora_config);

}  // namespace tessera
