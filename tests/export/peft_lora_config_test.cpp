#include "export/peft_lora_config.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "common/thrown_field.h"
#include "formats/plan_text.h"

namespace tessera {
namespace {

using json = nlohmann::json;

Plan plan_of(const ModelSpec& m, const std::string& text) { return load_plan(text, m, load_cluster("h100-sxm-80gb:8")).plan; }

std::set<std::string> fired_peft_rules(const json& lora) {
  std::set<std::string> ids;
  for (const PeftRule* r : peft_lora_violations(lora)) ids.insert(r->id);
  return ids;
}

TEST(PeftLoraConfig, LoraPlanBecomesTheAdapterItPrices) {
  const ModelSpec m = builtin_model("llama3-8b");
  const Plan p = plan_of(m, "mb=1,gbs=64,seq=4096,framework=pytorch,task=lora,lora_rank=16,lora_targets=q+v");
  const json lora = peft_lora_config(m, p);
  EXPECT_EQ(lora.at("peft_type"), "LORA");
  EXPECT_EQ(lora.at("task_type"), "CAUSAL_LM");
  EXPECT_EQ(lora.at("r"), 16);
  EXPECT_EQ(lora.at("lora_alpha"), 32);  // 2 r
  EXPECT_EQ(lora.at("target_modules"), (json{"q_proj", "v_proj"}));
  EXPECT_EQ(lora.at("bias"), "none");
  EXPECT_DOUBLE_EQ(lora.at("lora_dropout").get<double>(), 0.1);  // an 8B model: QLoRA's small-model dropout
  EXPECT_TRUE(fired_peft_rules(lora).empty());
  // lora alone has no bitsandbytes section.
  EXPECT_FALSE(peft_export(m, p).contains("bnb_config"));
  EXPECT_EQ(testing::thrown_field([&] { bitsandbytes_config(p); }), "task");
}

TEST(PeftLoraConfig, AllLinearTargetsEveryProjectionInOrder) {
  const ModelSpec m = builtin_model("llama3-70b");
  const Plan p = plan_of(m, "tp=1,mb=1,gbs=64,seq=4096,framework=pytorch,task=qlora,lora_rank=64,lora_targets=all-linear");
  const json lora = peft_lora_config(m, p);
  EXPECT_EQ(lora.at("target_modules"),
            (json{"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"}));
  EXPECT_DOUBLE_EQ(lora.at("lora_dropout").get<double>(), 0.05);  // 70B: QLoRA's large-model dropout
}

// QLoRA's base: NF4, double quantization, bf16 compute (Dettmers et al. 2023 §3).
TEST(PeftLoraConfig, QloraAddsTheFourBitBase) {
  const ModelSpec m = builtin_model("llama3-8b");
  const Plan p = plan_of(m, "mb=1,gbs=64,seq=4096,framework=pytorch,task=qlora,lora_rank=64");
  const json out = peft_export(m, p);
  const json& bnb = out.at("bnb_config");
  EXPECT_EQ(bnb.at("load_in_4bit"), true);
  EXPECT_EQ(bnb.at("bnb_4bit_quant_type"), "nf4");
  EXPECT_EQ(bnb.at("bnb_4bit_use_double_quant"), true);
  EXPECT_EQ(bnb.at("bnb_4bit_compute_dtype"), "bfloat16");
  EXPECT_EQ(out.at("lora_config").at("r"), 64);
}

TEST(PeftLoraConfig, PlansWithoutAdaptersOrWithUnnamedTargetsAreRefused) {
  const ModelSpec llama = builtin_model("llama3-8b");
  const Plan pretrain = plan_of(llama, "mb=1,gbs=64,seq=4096,framework=pytorch");
  EXPECT_EQ(testing::thrown_field([&] { peft_lora_config(llama, pretrain); }), "task");
  EXPECT_EQ(testing::thrown_field([&] { peft_export(llama, pretrain); }), "task");
  // Changed after validation (validate_plan refuses rank 0 first): PEFT's own rule catches it.
  Plan zero_rank = plan_of(llama, "mb=1,gbs=64,seq=4096,framework=pytorch,task=lora,lora_rank=8");
  zero_rank.tuning.lora_rank = 0;
  EXPECT_EQ(testing::thrown_field([&] { peft_lora_config(llama, zero_rank); }), "peft");
  // MoE experts do not carry Llama's MLP names; attention targets are fine.
  const ModelSpec mixtral = builtin_model("mixtral-8x7b");
  Plan moe = zero_rank;
  moe.tuning = {TrainingTask::lora, 8, kLoraAllLinear};
  EXPECT_EQ(testing::thrown_field([&] { peft_lora_config(mixtral, moe); }), "lora_targets");
  moe.tuning.lora_targets = kLoraQ | kLoraK | kLoraV | kLoraO;
  EXPECT_EQ(peft_lora_config(mixtral, moe).at("target_modules").size(), 4u);
}

TEST(PeftLoraRules, EachRuleFiresOnAConfigThatBreaksIt) {
  const ModelSpec m = builtin_model("llama3-8b");
  const json base = peft_lora_config(m, plan_of(m, "mb=1,gbs=64,seq=4096,framework=pytorch,task=lora,lora_rank=8"));
  auto edit = [&](const char* key, json value) {
    json c = base;
    if (value.is_null()) c.erase(key);
    else c[key] = value;
    return c;
  };
  const std::vector<std::pair<const char*, json>> cases = {
      {"peft-rank-positive", edit("r", 0)},           {"peft-bias", edit("bias", "some")},
      {"peft-task-type", edit("task_type", "CHAT")},  {"peft-dropout", edit("lora_dropout", 1.5)},
      {"peft-targets", edit("target_modules", json::array())},
  };
  std::set<std::string> covered;
  for (const auto& [id, config] : cases) {
    EXPECT_EQ(fired_peft_rules(config), std::set<std::string>{id}) << id;
    covered.insert(id);
  }
  for (const PeftRule& r : peft_lora_rules()) EXPECT_TRUE(covered.count(r.id)) << "no firing case for " << r.id;
}

}  // namespace
}  // namespace tessera
