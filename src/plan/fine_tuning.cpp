#include "plan/fine_tuning.h"

#include "core/error.h"

namespace tessera {

namespace {
struct TaskName {
  TrainingTask value;
  const char* text;
};
constexpr TaskName kTaskNames[] = {{TrainingTask::pretrain, "pretrain"},
                                   {TrainingTask::full_finetune, "full-finetune"},
                                   {TrainingTask::lora, "lora"},
                                   {TrainingTask::qlora, "qlora"}};
constexpr const char* kTaskValues = "pretrain, full-finetune, lora, qlora";

struct TargetName {
  LoraTarget bit;
  const char* text;    // the plan key's word
  const char* module;  // PEFT's target_modules name (Llama / Qwen / Mistral modeling files)
};
constexpr TargetName kTargetNames[] = {{kLoraQ, "q", "q_proj"},          {kLoraK, "k", "k_proj"},
                                       {kLoraV, "v", "v_proj"},          {kLoraO, "o", "o_proj"},
                                       {kLoraGate, "gate", "gate_proj"}, {kLoraUp, "up", "up_proj"},
                                       {kLoraDown, "down", "down_proj"}};
constexpr const char* kTargetValues = "all-linear, attention, or a '+' list of q, k, v, o, gate, up, down";
constexpr unsigned kLoraAttention = kLoraQ | kLoraK | kLoraV | kLoraO;
}  // namespace

const char* to_string(TrainingTask value) {
  for (const auto& n : kTaskNames)
    if (n.value == value) return n.text;
  return "?";
}

TrainingTask parse_training_task(const std::string& text) {
  for (const auto& n : kTaskNames)
    if (text == n.text) return n.value;
  if (text == "full_finetune") return TrainingTask::full_finetune;
  throw Error("task", "unknown task '" + text + "'", kTaskValues);
}

unsigned parse_lora_targets(const std::string& text) {
  if (text == "all-linear" || text == "all") return kLoraAllLinear;
  if (text == "attention") return kLoraAttention;
  unsigned bits = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t plus = text.find('+', start);
    const std::string word = text.substr(start, plus == std::string::npos ? std::string::npos : plus - start);
    unsigned bit = 0;
    for (const auto& n : kTargetNames)
      if (word == n.text || word == n.module) bit = n.bit;
    if (bit == 0) throw Error("lora_targets", "unknown module '" + word + "'", kTargetValues);
    if (bits & bit) throw Error("lora_targets", "'" + word + "' given twice", kTargetValues);
    bits |= bit;
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
  return bits;
}

std::string lora_targets_text(unsigned targets) {
  if (targets == kLoraAllLinear) return "all-linear";
  if (targets == kLoraAttention) return "attention";
  std::string text;
  for (const auto& n : kTargetNames)
    if (targets & n.bit) {
      if (!text.empty()) text += '+';
      text += n.text;
    }
  return text;
}

const char* lora_module_name(LoraTarget target) {
  for (const auto& n : kTargetNames)
    if (n.bit == target) return n.module;
  return "?";
}

}  // namespace tessera
