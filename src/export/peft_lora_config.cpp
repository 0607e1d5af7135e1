#include "export/peft_lora_config.h"

#include <array>
#include <string>

#include <fmt/core.h>

#include "core/error.h"
#include "model/parameter_count.h"

namespace tessera {
namespace {

using json = nlohmann::json;

// lora_alpha = 2 r: the scaling alpha / r = 2 whatever the rank, the rule of thumb of Raschka's
// LoRA experiments ("Practical Tips for Finetuning LLMs Using LoRA", Ahead of AI, 2023: "alpha =
// 2 x rank"). QLoRA itself used r 64 with alpha 16 (Dettmers et al. 2023, Appendix B.2); PEFT's own
// default is alpha 8 for every r (tuners/lora/config.py), which shrinks the update as r grows.
constexpr std::int64_t kAlphaPerRank = 2;
// lora_dropout: QLoRA's (Appendix B.2) 0.1 for its models up to 13B, 0.05 for 33B and 65B; a model
// below 20e9 parameters (between those sizes) takes the small models' value.
constexpr double kSmallModelDropout = 0.1;
constexpr double kLargeModelDropout = 0.05;
constexpr double kSmallModelMaxParams = 20e9;

constexpr std::array<LoraTarget, 7> kTargetOrder = {kLoraQ, kLoraK, kLoraV, kLoraO, kLoraGate, kLoraUp, kLoraDown};
constexpr unsigned kMlpTargets = kLoraGate | kLoraUp | kLoraDown;

// gate_proj / up_proj / down_proj exist in a dense SwiGLU MLP; MoE experts and non-gated MLPs
// name their matrices per architecture (Mixtral w1/w2/w3, GPT-2 c_fc, ...).
void check_targets(const ModelSpec& m, unsigned targets) {
  if ((targets & kMlpTargets) == 0) return;
  if (m.is_moe())
    throw Error("lora_targets", m.name + " is MoE: its experts' matrices are not named gate_proj / up_proj / down_proj",
                "attention (q+k+v+o)");
  if (m.mlp != MlpType::swiglu)
    throw Error("lora_targets", m.name + " has no gated MLP (gate_proj / up_proj / down_proj)", "attention (q+k+v+o)");
}

json target_modules(unsigned targets) {
  json names = json::array();
  for (LoraTarget t : kTargetOrder)
    if (targets & t) names.push_back(lora_module_name(t));
  return names;
}

double dropout(const ModelSpec& m) {
  return count_parameters(m).total() < kSmallModelMaxParams ? kSmallModelDropout : kLargeModelDropout;
}

void require_adapters(const Plan& p) {
  if (!p.tuning.adapters())
    throw Error("task", std::string("task ") + to_string(p.tuning.task) + " trains no LoRA adapters", "lora, qlora");
}

// PEFT's rules (huggingface/peft 5d602fdb).
bool has_string(const json& j, const char* key) { return j.contains(key) && j[key].is_string(); }

constexpr std::array<PeftRule, 5> kPeftRules{{
    {"peft-rank-positive", "src/peft/tuners/lora/layer.py :: LoraLayer.update_layer",
     [](const json& j) { return !j.contains("r") || !j["r"].is_number_integer() || j["r"].get<std::int64_t>() <= 0; },
     "r must be a positive integer"},
    {"peft-bias", "src/peft/tuners/lora/config.py :: LoraConfig.bias; tuners/tuners_utils.py :: _mark_only_adapters_as_trainable",
     [](const json& j) {
       if (!j.contains("bias")) return false;
       return !has_string(j, "bias") || (j["bias"] != "none" && j["bias"] != "all" && j["bias"] != "lora_only");
     },
     "bias must be none, all or lora_only"},
    {"peft-task-type", "src/peft/config.py :: PeftConfigMixin.__post_init__ (TaskType)",
     [](const json& j) {
       if (!j.contains("task_type") || j["task_type"].is_null()) return false;
       static const std::array<const char*, 6> kTypes = {"SEQ_CLS", "SEQ_2_SEQ_LM", "CAUSAL_LM", "TOKEN_CLS", "QUESTION_ANS",
                                                         "FEATURE_EXTRACTION"};
       for (const char* t : kTypes)
         if (j["task_type"] == t) return false;
       return true;
     },
     "task_type must be one of PEFT's TaskType values"},
    {"peft-dropout", "src/peft/tuners/lora/layer.py :: update_layer (torch.nn.Dropout(p): 0 <= p <= 1)",
     [](const json& j) {
       if (!j.contains("lora_dropout")) return false;
       if (!j["lora_dropout"].is_number()) return true;
       const double p = j["lora_dropout"].get<double>();
       return p < 0 || p > 1;
     },
     "lora_dropout must be a probability"},
    {"peft-targets", "src/peft/tuners/tuners_utils.py :: BaseTuner.inject_adapter (no target module found)",
     [](const json& j) { return !j.contains("target_modules") || !j["target_modules"].is_array() || j["target_modules"].empty(); },
     "target_modules must name at least one module"},
}};

void require_peft_accepts(const json& lora) {
  const auto broken = peft_lora_violations(lora);
  if (broken.empty()) return;
  throw Error("peft", fmt::format("PEFT would refuse this LoraConfig: rule {} ({}): {}", broken.front()->id,
                                  broken.front()->source, broken.front()->message),
              "a LoRA plan PEFT accepts");
}

}  // namespace

json peft_lora_config(const ModelSpec& m, const Plan& p) {
  require_adapters(p);
  const FineTuning& t = p.tuning;
  check_targets(m, t.lora_targets);
  json lora = {{"peft_type", "LORA"},
               {"task_type", "CAUSAL_LM"},
               {"r", t.lora_rank},
               {"lora_alpha", kAlphaPerRank * t.lora_rank},
               {"lora_dropout", dropout(m)},
               {"target_modules", target_modules(t.lora_targets)},
               {"bias", "none"}};
  require_peft_accepts(lora);
  return lora;
}

json bitsandbytes_config(const Plan& p) {
  if (!p.tuning.quantized_base())
    throw Error("task", std::string("task ") + to_string(p.tuning.task) + " keeps a 16-bit base (no bitsandbytes)", "qlora");
  // QLoRA §3: 4-bit NormalFloat storage, double quantization of the block constants, bf16 compute.
  return {{"load_in_4bit", true},
          {"bnb_4bit_quant_type", "nf4"},
          {"bnb_4bit_use_double_quant", true},
          {"bnb_4bit_compute_dtype", "bfloat16"}};
}

json peft_export(const ModelSpec& m, const Plan& p) {
  json out = {{"lora_config", peft_lora_config(m, p)}};
  if (p.tuning.quantized_base()) out["bnb_config"] = bitsandbytes_config(p);
  return out;
}

std::span<const PeftRule> peft_lora_rules() { return kPeftRules; }

std::vector<const PeftRule*> peft_lora_violations(const json& lora) {
  std::vector<const PeftRule*> broken;
  for (const PeftRule& rule : kPeftRules)
    if (rule.violated(lora)) broken.push_back(&rule);
  return broken;
}

}  // namespace tessera
