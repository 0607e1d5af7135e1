// What a job trains (issue 34): every parameter from scratch or from a checkpoint, or low-rank
// adapters beside frozen weights.
// - LoRA (Hu et al. 2021, arXiv 2106.09685 §4.1): each targeted weight W (d_out x d_in) stays
//   frozen; a trainable pair B (d_out x r) A (r x d_in) is added, so r (d_in + d_out) trainable
//   parameters per targeted matrix, and only those carry gradients and optimizer state.
// - QLoRA (Dettmers et al. 2023, arXiv 2305.14314 §3): the frozen linear weights are stored in
//   4-bit NormalFloat with double-quantized block constants and dequantized to bf16 for each use;
//   embeddings, norms and the output layer stay 16-bit (bitsandbytes quantizes nn.Linear only and
//   transformers skips lm_head).
#pragma once

#include <cstdint>
#include <string>

namespace tessera {

enum class TrainingTask { pretrain, full_finetune, lora, qlora };
const char* to_string(TrainingTask value);
TrainingTask parse_training_task(const std::string& text);  // Error("task", ...)

// The linear layers an adapter is attached to (PEFT LoraConfig target_modules, Llama names).
enum LoraTarget : unsigned {
  kLoraQ = 1u << 0,
  kLoraK = 1u << 1,
  kLoraV = 1u << 2,
  kLoraO = 1u << 3,
  kLoraGate = 1u << 4,
  kLoraUp = 1u << 5,
  kLoraDown = 1u << 6,
};
constexpr unsigned kLoraAllLinear = (1u << 7) - 1;
// QLoRA's and PEFT's usual default for a fine-tune: every linear layer of every block (QLoRA §4:
// "LoRA on all linear transformer block layers").
constexpr unsigned kDefaultLoraTargets = kLoraAllLinear;
// PEFT's default rank (LoraConfig r = 8, peft/tuners/lora/config.py), what `plan --task lora`
// assumes (and says) when no rank is pinned.
inline constexpr std::int64_t kPeftDefaultLoraRank = 8;

// "q+k+v+o+gate+up+down", "all-linear" or "attention" (q+k+v+o) <-> bits.
unsigned parse_lora_targets(const std::string& text);  // Error("lora_targets", ...)
std::string lora_targets_text(unsigned targets);
// PEFT's module names of the targets ("q_proj", ...), in this order.
const char* lora_module_name(LoraTarget target);

struct FineTuning {
  TrainingTask task = TrainingTask::pretrain;
  std::int64_t lora_rank = 0;      // r; > 0 exactly for lora / qlora
  unsigned lora_targets = kDefaultLoraTargets;

  bool adapters() const { return task == TrainingTask::lora || task == TrainingTask::qlora; }
  bool quantized_base() const { return task == TrainingTask::qlora; }
  bool operator==(const FineTuning&) const = default;
};

}  // namespace tessera
