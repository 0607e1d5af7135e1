#include "export/deepspeed_config.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "common/offload_planner_case.h"
#include "common/thrown_field.h"
#include "export/deepspeed_rules.h"
#include "formats/plan_text.h"

namespace tessera {
namespace {

using json = nlohmann::json;

struct Exported {
  PlanRequest request;
  json config;
  DeepSpeedTopology topology;
};

Exported export_plan(const char* model_name, const char* cluster_name, const std::string& plan_text) {
  const ModelSpec model = builtin_model(model_name);
  const Cluster cluster = load_cluster(cluster_name);
  Exported e{load_plan(plan_text, model, cluster), {}, {}};
  e.config = deepspeed_config(model, e.request.plan, e.request.workload, cluster);
  e.topology = {e.request.plan.dp, e.request.plan.pp, cluster.gpu.family != "volta"};
  return e;
}

std::set<std::string> fired(const json& config, const DeepSpeedTopology& topology) {
  std::set<std::string> ids;
  for (const DeepSpeedRule* r : deepspeed_violations(config, topology)) ids.insert(r->id);
  return ids;
}

int expected_stage(OptimizerSharding z) {
  return z == OptimizerSharding::none ? 0 : z == OptimizerSharding::zero1 ? 1 : z == OptimizerSharding::zero2 ? 2 : 3;
}

const char* expected_device(MemoryTier t) { return t == MemoryTier::gpu ? "none" : t == MemoryTier::cpu ? "cpu" : "nvme"; }

// What every exported config must say about its plan, read from the JSON.
void expect_config_says_the_plan(const Exported& e) {
  const Plan& p = e.request.plan;
  const json& c = e.config;
  const std::int64_t gas = c.at("gradient_accumulation_steps").get<std::int64_t>();
  EXPECT_EQ(c.at("train_batch_size").get<std::int64_t>(), e.request.workload.global_batch);
  EXPECT_EQ(c.at("train_micro_batch_size_per_gpu").get<std::int64_t>(), p.micro_batch);
  EXPECT_EQ(p.micro_batch * gas * p.dp, e.request.workload.global_batch);
  EXPECT_EQ(gas, p.microbatches(e.request.workload));
  const json& z = c.at("zero_optimization");
  EXPECT_EQ(z.at("stage").get<int>(), expected_stage(p.zero));
  for (const auto& [key, tier] : {std::pair{"offload_optimizer", p.offload.optimizer}, std::pair{"offload_param", p.offload.params}}) {
    if (tier == MemoryTier::gpu) {
      EXPECT_FALSE(z.contains(key)) << key;
      continue;
    }
    EXPECT_EQ(z.at(key).at("device"), expected_device(tier)) << key;
    EXPECT_EQ(z.at(key).contains("nvme_path"), tier == MemoryTier::nvme) << key;
    if (tier == MemoryTier::nvme) {
      EXPECT_EQ(z.at(key).at("nvme_path"), kDeepSpeedNvmePlaceholder);
    }
  }
  EXPECT_EQ(c.contains("activation_checkpointing"), p.recompute == Recompute::full);
  if (c.contains("activation_checkpointing")) {
    EXPECT_EQ(c["activation_checkpointing"].at("cpu_checkpointing").get<bool>(), p.offload.activations == MemoryTier::cpu);
  }
  EXPECT_EQ(c.at("optimizer").at("type"), "AdamW");
  EXPECT_GT(c.at("gradient_clipping").get<double>(), 0.0);
}

// Eleven plans over every stage, CPU and NVMe optimizer offload, parameter offload, CPU activation
// checkpoints, gradient accumulation, a pipeline, AutoTP and Megatron-DeepSpeed: each config says
// its plan and passes every rule (deepspeed_config checks too; this reads the JSON independently).
TEST(DeepSpeedConfig, PlansOverEveryStageAndOffloadPassTheRules) {
  const std::string ds = ",framework=deepspeed";
  const char* kPlans[] = {
      "tp=1,pp=1,mb=1,gbs=64,seq=4096,zero=0",                                                        // stage 0, gas 8
      "tp=1,pp=1,mb=2,gbs=256,seq=4096,zero=1",                                                       // gas 8
      "tp=1,pp=1,mb=1,gbs=16,seq=4096,zero=2",                                                        // gas 1
      "tp=1,pp=1,mb=1,gbs=128,seq=4096,zero=3",                                                       // ZeRO-3
      "tp=1,pp=1,mb=1,gbs=64,seq=4096,zero=1,offload_optimizer=cpu",                                  // ZeRO-Offload
      "tp=1,pp=1,mb=1,gbs=64,seq=4096,zero=2,offload_optimizer=cpu",
      "tp=1,pp=1,mb=1,gbs=64,seq=4096,zero=3,offload_optimizer=nvme,offload_params=nvme",             // ZeRO-Infinity
      "tp=1,pp=1,mb=1,gbs=64,seq=4096,zero=3,offload_optimizer=cpu,offload_params=cpu",
      "tp=1,pp=1,mb=1,gbs=64,seq=4096,zero=3,recompute=full,offload_activations=cpu",                 // CPU checkpoints
      "tp=1,pp=2,mb=1,gbs=64,seq=4096,zero=1",                                                        // pipeline engine
      "tp=2,pp=1,mb=1,gbs=64,seq=4096,zero=1,recompute=full",                                         // AutoTP
  };
  int exported = 0;
  for (const char* plan : kPlans) {
    const Exported e = export_plan("llama3-8b", "h100-sxm-80gb:16", plan + ds);
    EXPECT_TRUE(fired(e.config, e.topology).empty()) << plan << ": " << *fired(e.config, e.topology).begin();
    expect_config_says_the_plan(e);
    EXPECT_EQ(e.config.at("bf16").at("enabled"), true) << plan;
    EXPECT_EQ(e.config.contains("tensor_parallel"), e.request.plan.tp > 1) << plan;
    ++exported;
  }
  EXPECT_EQ(exported, 11);
}

TEST(DeepSpeedConfig, PipelinesDoNotOverlapAndMegatronDeepSpeedKeepsItsOwnTp) {
  const Exported pipe = export_plan("llama3-8b", "h100-sxm-80gb:16", "tp=1,pp=2,mb=1,gbs=64,seq=4096,zero=1,framework=deepspeed");
  EXPECT_EQ(pipe.config["zero_optimization"].at("overlap_comm"), false);
  const Exported flat = export_plan("llama3-8b", "h100-sxm-80gb:16", "tp=1,pp=1,mb=1,gbs=64,seq=4096,zero=1,framework=deepspeed");
  EXPECT_EQ(flat.config["zero_optimization"].at("overlap_comm"), true);
  const Exported mds =
      export_plan("llama3-8b", "h100-sxm-80gb:16", "tp=2,pp=2,mb=1,gbs=64,seq=4096,zero=1,framework=megatron-deepspeed");
  EXPECT_FALSE(mds.config.contains("tensor_parallel"));
  EXPECT_EQ(mds.config.at("gradient_accumulation_steps"), 64 / 4);  // dp = 16 / (tp 2 x pp 2)
  EXPECT_TRUE(fired(mds.config, mds.topology).empty());
}

// Volta has no BF16: fp16 with dynamic loss scaling (loss_scale 0), and the bf16 rule holds.
TEST(DeepSpeedConfig, VoltaTrainsInFp16) {
  const Exported e = export_plan("llama3-8b", "v100-sxm3-32gb:16", "tp=1,pp=1,mb=1,gbs=64,seq=2048,zero=3,framework=deepspeed");
  EXPECT_FALSE(e.config.contains("bf16"));
  EXPECT_EQ(e.config.at("fp16").at("enabled"), true);
  EXPECT_EQ(e.config["fp16"].at("loss_scale"), 0);
  EXPECT_TRUE(fired(e.config, e.topology).empty());
  json bf16 = e.config;
  bf16.erase("fp16");
  bf16["bf16"] = {{"enabled", true}};
  EXPECT_EQ(fired(bf16, e.topology), std::set<std::string>{"ds-bf16-device"});
}

// Plans DeepSpeed cannot express are refused naming the plan key (changed after validation, which
// refuses several of them first).
TEST(DeepSpeedConfig, PlansDeepSpeedCannotExpressNameTheKey) {
  const ModelSpec m = builtin_model("llama3-8b");
  const Cluster c = load_cluster("h100-sxm-80gb:16");
  const PlanRequest base = load_plan("tp=1,pp=1,mb=1,gbs=64,seq=4096,zero=1,framework=deepspeed", m, c);
  auto field_of = [&](auto change) {
    Plan p = base.plan;
    change(p);
    return testing::thrown_field([&] { deepspeed_config(m, p, base.workload, c); });
  };
  EXPECT_EQ(field_of([](Plan&) {}), "<no error>");
  EXPECT_EQ(field_of([](Plan& p) { p.offload.params = MemoryTier::cpu; }), "offload_params");  // zero 1
  EXPECT_EQ(field_of([](Plan& p) { p.offload.optimizer = MemoryTier::cpu, p.zero = OptimizerSharding::none; }), "offload_optimizer");
  EXPECT_EQ(field_of([](Plan& p) { p.offload.optimizer = MemoryTier::nvme, p.zero = OptimizerSharding::zero2; }), "offload_optimizer");
  EXPECT_EQ(field_of([](Plan& p) { p.offload.activations = MemoryTier::cpu; }), "offload_activations");  // no recompute
  EXPECT_EQ(field_of([](Plan& p) { p.offload.activations = MemoryTier::nvme, p.recompute = Recompute::full; }),
            "offload_activations");
  EXPECT_EQ(field_of([](Plan& p) { p.cp = 2, p.dp = 8; }), "cp");
  EXPECT_EQ(field_of([](Plan& p) { p.precision = Precision::fp8; }), "precision");
  EXPECT_EQ(field_of([](Plan& p) { p.pp = 2, p.dp = 8, p.zero = OptimizerSharding::zero2; }), "zero");
  EXPECT_EQ(field_of([](Plan& p) { p.zero = OptimizerSharding::zero3, p.reshard_after_forward = false; }), "reshard_after_forward");
  EXPECT_EQ(field_of([](Plan& p) { p.micro_batch = 3; }), "gbs");  // 64 is not a multiple of 3 x 16
}


// What the planner writes: the five best DeepSpeed plans of twelve searches (pretraining, full
// fine-tuning that needs ZeRO-Offload, LoRA and QLoRA, 1 to 64 GPUs, Ampere, Hopper and Volta),
// each exported and read back through DeepSpeed's rule table.
TEST(DeepSpeedConfig, EveryPlanThePlannerWritesPassesTheRules) {
  const testing::OffloadPlannerCase kCases[] = {
      {"llama3-8b", "a100-sxm-40gb:1", 8, 4096, TrainingTask::full_finetune},   // needs the optimizer on CPU
      {"llama3-8b", "h100-sxm-80gb:8", 64, 4096, TrainingTask::pretrain},
      {"llama3-8b", "h100-sxm-80gb:16", 128, 8192, TrainingTask::full_finetune},
      {"llama2-7b", "a100-sxm-80gb:8", 32, 2048, TrainingTask::lora},
      {"llama2-13b", "v100-sxm3-32gb:16", 64, 2048, TrainingTask::full_finetune},  // fp16 on Volta
      {"llama2-13b", "v100-sxm3-32gb:1", 8, 1024, TrainingTask::full_finetune},    // ZeRO-Offload's one GPU
      {"llama3-70b", "a100-sxm-40gb:8", 8, 4096, TrainingTask::full_finetune},
      {"llama3-70b", "h100-sxm-80gb:64", 256, 4096, TrainingTask::pretrain},
      {"llama3-70b", "a100-sxm-80gb:8", 16, 2048, TrainingTask::qlora},
      {"qwen2.5-7b", "a100-sxm-40gb:4", 16, 4096, TrainingTask::lora},
      {"qwen2.5-32b", "h100-sxm-80gb:8", 32, 4096, TrainingTask::full_finetune},
      {"llama-65b", "rtx-a6000:1", 16, 512, TrainingTask::qlora},
  };
  int exported = 0;
  for (const testing::OffloadPlannerCase& pc : kCases) {
    const testing::PlannedOffloadCase c = testing::plan_with_offload(pc, TrainingFramework::deepspeed);
    ASSERT_FALSE(c.found.search.plans.empty()) << c.name();
    for (const RankedPlan& ranked : c.found.search.plans) {
      const Plan& p = ranked.plan;
      const json config = deepspeed_config(c.model, p, c.workload, c.cluster);
      const DeepSpeedTopology topology{p.dp, p.pp, c.cluster.gpu.family != "volta"};
      const std::set<std::string> broken = fired(config, topology);
      EXPECT_TRUE(broken.empty()) << c.name() << ": " << *broken.begin();
      EXPECT_EQ(config.at("train_batch_size").get<std::int64_t>(), pc.gbs);
      ++exported;
    }
  }
  EXPECT_GE(exported, 40);
}

}  // namespace
}  // namespace tessera
