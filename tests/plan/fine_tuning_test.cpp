// The fine-tuning task and LoRA targets as plan keys: names round-trip, and bad values name the
// key (plan/fine_tuning.h).
#include "plan/fine_tuning.h"

#include <gtest/gtest.h>

#include "common/thrown_field.h"

namespace tessera {
namespace {

using testing::thrown_field;

TEST(FineTuning, TaskNamesRoundTrip) {
  for (TrainingTask t : {TrainingTask::pretrain, TrainingTask::full_finetune, TrainingTask::lora, TrainingTask::qlora})
    EXPECT_EQ(parse_training_task(to_string(t)), t);
  EXPECT_EQ(thrown_field([] { parse_training_task("sft"); }), "task");
}

TEST(FineTuning, TargetListsRoundTripAndNameEveryModule) {
  EXPECT_EQ(parse_lora_targets("all-linear"), kLoraAllLinear);
  EXPECT_EQ(parse_lora_targets("q+k+v+o"), parse_lora_targets("attention"));
  EXPECT_EQ(parse_lora_targets("q_proj+v_proj"), unsigned{kLoraQ | kLoraV});
  for (unsigned bits : {unsigned{kLoraQ | kLoraV}, unsigned{kLoraDown}, kLoraAllLinear, unsigned{kLoraGate | kLoraUp}})
    EXPECT_EQ(parse_lora_targets(lora_targets_text(bits)), bits);
  EXPECT_STREQ(lora_module_name(kLoraDown), "down_proj");
  EXPECT_EQ(thrown_field([] { parse_lora_targets("q+lm_head"); }), "lora_targets");
  EXPECT_EQ(thrown_field([] { parse_lora_targets("q+q"); }), "lora_targets");
}

TEST(FineTuning, OnlyAdapterTasksCarryAdapters) {
  FineTuning t;
  EXPECT_FALSE(t.adapters());
  t.task = TrainingTask::full_finetune;
  EXPECT_FALSE(t.adapters());
  t.task = TrainingTask::lora;
  EXPECT_TRUE(t.adapters());
  EXPECT_FALSE(t.quantized_base());
  t.task = TrainingTask::qlora;
  EXPECT_TRUE(t.quantized_base());
}

}  // namespace
}  // namespace tessera
