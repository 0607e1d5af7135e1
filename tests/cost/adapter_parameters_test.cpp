// LoRA's trainable parameters: r (d_in + d_out) per targeted matrix (Hu et al. 2021 §4.1), and
// NF4's bytes per weight with double quantization (Dettmers et al. 2023 §3).
#include "cost/adapter_parameters.h"

#include <gtest/gtest.h>

#include "catalog/model_source.h"
#include "model/parameter_count.h"

namespace tessera {
namespace {

FineTuning lora(std::int64_t rank, unsigned targets) {
  FineTuning t;
  t.task = TrainingTask::lora;
  t.lora_rank = rank;
  t.lora_targets = targets;
  return t;
}

// LLaMA-7B (32 layers, hidden 4096) with r = 8 on q_proj and v_proj: 32 x 2 x 8 x (4096 + 4096)
// = 4,194,304, what PEFT's print_trainable_parameters reports for that model and config.
TEST(AdapterParameters, LlamaSevenBQueryValueRankEight) {
  const ModelSpec m = load_model("llama2-7b");
  EXPECT_DOUBLE_EQ(adapter_params(m, lora(8, kLoraQ | kLoraV)), 4'194'304.0);
}

// Every linear layer of a GQA SwiGLU block: q (h -> h), k and v (h -> kv), o (h -> h), gate and
// up (h -> f), down (f -> h), each r (d_in + d_out).
TEST(AdapterParameters, AllLinearOfAGqaSwigluLayerByHand) {
  const ModelSpec m = load_model("llama3-8b");
  const double r = 16, h = 4096, kv = 8 * 128, f = 14336;
  const double by_hand = r * ((h + h) + 2.0 * (h + kv) + (h + h) + 2.0 * (h + f) + (f + h));
  EXPECT_DOUBLE_EQ(adapter_params_per_layer(m, lora(16, kLoraAllLinear), false), by_hand);
  EXPECT_DOUBLE_EQ(adapter_params(m, lora(16, kLoraAllLinear)), 32.0 * by_hand);
  // An MoE layer keeps only its attention adapters.
  EXPECT_DOUBLE_EQ(adapter_params_per_layer(m, lora(16, kLoraAllLinear), true), r * ((h + h) + 2.0 * (h + kv) + (h + h)));
}

TEST(AdapterParameters, ScaleLinearlyWithRankAndVanishWithoutAdapters) {
  const ModelSpec m = load_model("llama-65b");
  EXPECT_DOUBLE_EQ(adapter_params(m, lora(64, kLoraAllLinear)), 8.0 * adapter_params(m, lora(8, kLoraAllLinear)));
  FineTuning full;
  full.task = TrainingTask::full_finetune;
  EXPECT_EQ(adapter_params(m, full), 0.0);
  // Far below the model: r = 64 on every linear layer of LLaMA-65B is about 1.2% of its weights.
  const double share = adapter_params(m, lora(64, kLoraAllLinear)) / count_parameters(m).total();
  EXPECT_GT(share, 0.010);
  EXPECT_LT(share, 0.015);
}

// 4 bits + 8/64 (first-level constants) + 32/(64 x 256) (second level) = 4.127 bits.
TEST(AdapterParameters, Nf4WithDoubleQuantizationIs4127BitsPerWeight) {
  EXPECT_NEAR(kNf4BitsPerParam, 4.127, 0.0005);
  EXPECT_NEAR(kNf4BytesPerParam * 8.0, kNf4BitsPerParam, 1e-12);
}

}  // namespace
}  // namespace tessera
