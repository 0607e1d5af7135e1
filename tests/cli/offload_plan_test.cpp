// When a job does not fit (issue 34): `plan` answers with offload or adapters instead of "add GPUs",
// says which tier each step needed, writes the DeepSpeed and PEFT configs of the answer, and
// refuses a tier, offload or rank that cannot exist with one line naming the field, exit 2.
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_process.h"

namespace {

using namespace tessera::testing;
using json = nlohmann::json;

class OffloadPlan : public CliScratchTest {};

// The last offload step taken: the placement of the plans that fit.
const json& last_step(const json& doc) { return doc.at("offload_steps").back(); }

// Llama 3 70B's bf16 weights alone are 141 GB: 17.6 GB per A100 40 GB of eight before any
// activation, so LoRA at 4,096 tokens needs the frozen base sharded and moved to the host.
TEST_F(OffloadPlan, Llama70bLoraOnEightA100s40GbFits) {
  const RunResult r = run_tessera(dir_, {"plan", "--quiet", "--json", "--model", "llama3-70b", "--cluster",
                                         "a100-sxm-40gb:8", "--task", "lora", "--seq", "4096", "--gbs", "8",
                                         "--framework", "pytorch", "--top", "3"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json doc = json::parse(r.out);
  ASSERT_FALSE(doc.at("plans").empty()) << r.out;
  for (const json& p : doc["plans"]) {
    EXPECT_TRUE(p.at("fits").get<bool>());
    EXPECT_LE(p.at("peak_memory_gib").get<double>(), doc.at("memory_limit_gib").get<double>());
    EXPECT_EQ(p.at("plan").at("task"), "lora");
  }
  EXPECT_FALSE(doc["offload_steps"].front().at("fits").get<bool>());  // every tensor on the GPUs: none fits
  EXPECT_GT(doc["offload_steps"].front().at("min_peak_gib").get<double>(), doc["memory_limit_gib"].get<double>());
  EXPECT_TRUE(last_step(doc).at("fits").get<bool>());
}

// Llama 3.1 8B trained in full (16 B of bf16 weights and gradients plus fp32 Adam state per
// parameter, 128 GB) cannot fit one A100 40 GB; the optimizer on the CPU is the step that fits,
// and the text says so.
TEST_F(OffloadPlan, Llama8bFullFineTuneOnOneA100NamesTheTierItNeeded) {
  const std::vector<std::string> args = {"plan", "--quiet", "--model", "llama3-8b", "--cluster", "a100-sxm-40gb:1",
                                         "--task", "full-finetune", "--seq", "4096", "--gbs", "8", "--framework",
                                         "deepspeed", "--top", "2"};
  std::vector<std::string> with_json = args;
  with_json.push_back("--json");
  const RunResult r = run_tessera(dir_, with_json);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json doc = json::parse(r.out);
  ASSERT_FALSE(doc.at("plans").empty());
  EXPECT_EQ(doc["plans"][0].at("plan").at("offload_optimizer"), "cpu");
  // The ladder ends one step after the first placement that fits (a faster plan may need one more).
  ASSERT_EQ(doc["offload_steps"].size(), 3u) << r.out;
  EXPECT_FALSE(doc["offload_steps"][0].at("fits").get<bool>());
  EXPECT_EQ(doc["offload_steps"][1].at("optimizer"), "cpu");
  EXPECT_EQ(doc["offload_steps"][1].at("params"), "gpu");
  EXPECT_TRUE(doc["offload_steps"][1].at("fits").get<bool>());
  const RunResult text = run_tessera(dir_, args);
  ASSERT_EQ(text.exit_code, 0) << describe(text);
  EXPECT_NE(text.out.find("every tensor on the GPUs: none fits"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("optimizer to cpu: "), std::string::npos) << text.out;
}

// --emit deepspeed writes the answer's config: the ZeRO-Offload step the search needed.
TEST_F(OffloadPlan, EmitDeepSpeedWritesTheOffloadTheSearchNeeded) {
  const RunResult r = run_tessera(dir_, {"plan", "--quiet", "--model", "llama3-8b", "--cluster", "a100-sxm-40gb:1",
                                         "--task", "full-finetune", "--seq", "4096", "--gbs", "8", "--framework",
                                         "deepspeed", "--emit", "deepspeed"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json config = json::parse(r.out);
  EXPECT_EQ(config.at("train_batch_size"), 8);
  EXPECT_EQ(config.at("zero_optimization").at("offload_optimizer").at("device"), "cpu");
  EXPECT_GE(config["zero_optimization"].at("stage").get<int>(), 1);
}

// --emit peft writes the adapter the plan priced: the rank asked for, and QLoRA's NF4 base.
TEST_F(OffloadPlan, EmitPeftWritesTheAdapterAndTheFourBitBase) {
  const RunResult r = run_tessera(dir_, {"plan", "--quiet", "--model", "llama3-8b", "--cluster", "a100-sxm-40gb:1",
                                         "--task", "qlora", "--seq", "2048", "--gbs", "8", "--framework", "pytorch",
                                         "--fix", "lora_rank=64", "--emit", "peft"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json doc = json::parse(r.out);
  EXPECT_EQ(doc.at("lora_config").at("r"), 64);
  EXPECT_EQ(doc.at("bnb_config").at("bnb_4bit_quant_type"), "nf4");
}

TEST_F(OffloadPlan, EmitFormatsNeedTheirFrameworkAndTask) {
  expect_error_naming(run_tessera(dir_, {"plan", "--model", "llama3-8b", "--cluster", "h100:8", "--seq", "4096",
                                         "--gbs", "8", "--emit", "peft"}),
                      "--emit");
  expect_error_naming(run_tessera(dir_, {"plan", "--model", "llama3-8b", "--cluster", "h100:8", "--seq", "4096",
                                         "--gbs", "8", "--emit", "deepspeed"}),
                      "--emit");
}

TEST_F(OffloadPlan, NvmeOnAClusterWithoutNvmeNamesTheKey) {
  // The RTX A6000 is a workstation card: the catalog knows no host or NVMe for it.
  expect_error_naming(run_tessera(dir_, {"plan", "--model", "llama3-8b", "--cluster", "rtx-a6000:1", "--framework",
                                         "deepspeed", "--task", "full-finetune", "--seq", "512", "--gbs", "8", "--fix",
                                         "offload_optimizer=nvme"}),
                      "offload_optimizer");
}

TEST_F(OffloadPlan, OffloadTheFrameworkCannotDoNamesTheKey) {
  // Megatron-LM offloads its optimizer to the CPU only, and never the parameters.
  expect_error_naming(run_tessera(dir_, {"plan", "--model", "llama3-8b", "--cluster", "a100-sxm-40gb:8", "--seq",
                                         "512", "--gbs", "8", "--fix", "offload_params=cpu"}),
                      "offload_params");
  expect_error_naming(run_tessera(dir_, {"plan", "--model", "llama3-8b", "--cluster", "a100-sxm-40gb:8", "--seq",
                                         "512", "--gbs", "8", "--fix", "offload_optimizer=nvme"}),
                      "offload_optimizer");
}

TEST_F(OffloadPlan, LoraRankOutsideOneToHiddenNamesTheKey) {
  for (const char* rank : {"lora_rank=0", "lora_rank=4097", "lora_rank=-1"})
    expect_error_naming(run_tessera(dir_, {"plan", "--model", "llama3-8b", "--cluster", "a100-sxm-40gb:8",
                                           "--framework", "pytorch", "--task", "lora", "--seq", "512", "--gbs", "8",
                                           "--fix", rank}),
                        "lora_rank");
}

TEST_F(OffloadPlan, UnknownTaskOrLoraOnMegatronNamesTheField) {
  expect_error_naming(run_tessera(dir_, {"plan", "--model", "llama3-8b", "--cluster", "a100-sxm-40gb:8", "--task",
                                         "sft", "--seq", "512", "--gbs", "8"}),
                      "--task");
  expect_error_naming(run_tessera(dir_, {"plan", "--model", "llama3-8b", "--cluster", "a100-sxm-40gb:8", "--framework",
                                         "megatron", "--task", "lora", "--seq", "512", "--gbs", "8", "--fix",
                                         "lora_rank=8"}),
                      "task");
}

// MegaTrain (framework=megatrain): the answer for a model whose state only host memory holds, and
// each of its limits named: one GPU, parameters and optimizer on the host, no adapters.
TEST_F(OffloadPlan, MegatrainTrainsFromHostMemoryOnOneGpu) {
  const auto r = run_tessera(dir_, {"plan", "--model", "gpt-oss-120b", "--cluster",
                                    std::string(TESSERA_SOURCE_DIR) + "/examples/clusters/h200-1.5tb-host.json",
                                    "--framework", "megatrain", "--task", "full-finetune", "--seq", "1024", "--gbs",
                                    "64", "--json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const json best = json::parse(r.out).at("plans").at(0);
  EXPECT_TRUE(best.at("fits").get<bool>());
  EXPECT_EQ(best.at("plan").at("framework"), "megatrain");
  EXPECT_EQ(best.at("plan").at("offload_params"), "cpu");
}

TEST_F(OffloadPlan, MegatrainLimitsNameTheirField) {
  const std::vector<std::string> common{"--model", "qwen2.5-32b", "--seq", "1024", "--gbs", "8"};
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.end(), common.begin(), common.end());
    return run_tessera(dir_, args);
  };
  expect_error_naming(run({"plan", "--cluster", "h100-sxm-80gb:8", "--framework", "megatrain"}), "--cluster");
  expect_error_naming(run({"plan", "--cluster", "h100-sxm-80gb:1", "--framework", "megatrain", "--fix",
                           "offload_optimizer=gpu"}),
                      "offload_optimizer");
  expect_error_naming(run({"plan", "--cluster", "h100-sxm-80gb:1", "--framework", "megatrain", "--task", "lora"}),
                      "task");
  expect_error_naming(run_tessera(dir_, {"estimate", "--model", "qwen2.5-32b", "--cluster", "h100-sxm-80gb:1", "--plan",
                                         "framework=megatrain,recompute=full,mb=4,gbs=8,seq=1024"}),
                      "offload_optimizer");
}

}  // namespace
