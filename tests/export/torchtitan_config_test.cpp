#include "export/torchtitan_config.h"

#include <algorithm>
#include <numeric>

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "common/offload_planner_case.h"
#include "common/thrown_field.h"
#include "export/torchtitan_rules.h"
#include "formats/plan_text.h"

namespace tessera {
namespace {

struct TorchtitanExport {
  PlanRequest request;
  TorchtitanJobFiles files;
  TorchtitanJob job;  // read back from the text
};

TorchtitanExport export_torchtitan_plan(const char* model_name, const char* cluster_name, const char* plan_text) {
  const ModelSpec model = builtin_model(model_name);
  const Cluster cluster = load_cluster(cluster_name);
  TorchtitanExport e{load_plan(plan_text, model, cluster), {}, {}};
  e.files = torchtitan_job(model, e.request.plan, e.request.workload, cluster);
  e.job = parse_torchtitan_job(e.files.recipe_py, e.files.launch_command);
  return e;
}

// torchtitan's accumulation (trainer.py Trainer.__init__): tokens per step over the tokens of one
// accumulation iteration (micro-batch tokens x pipeline micro-batches x dp_replicate x dp_shard).
std::int64_t accumulation_steps(const TorchtitanJob& j) {
  const std::int64_t per_iteration =
      j.tokens_per_microbatch * (j.pp > 1 ? j.num_pp_microbatches : 1) * j.dp_replicate * j.dp_shard;
  return j.tokens_per_step / per_iteration;
}

// Local batch x dp x accumulation (x pipeline micro-batches) = the global batch, in sequences, and
// each forward carries exactly the plan's micro-batch.
void expect_batch_semantics(const TorchtitanExport& e) {
  const Plan& p = e.request.plan;
  const Workload& w = e.request.workload;
  const TorchtitanJob& j = e.job;
  EXPECT_EQ(j.tokens_per_microbatch, p.micro_batch * w.seq_len);
  EXPECT_EQ(j.max_context, w.seq_len);
  EXPECT_EQ(j.tokens_per_microbatch / j.max_context, p.micro_batch);
  EXPECT_EQ(j.dp_replicate * j.dp_shard, p.dp);
  const std::int64_t local_sequences = j.tokens_per_microbatch / j.max_context;
  const std::int64_t pipeline_microbatches = j.pp > 1 ? j.num_pp_microbatches : 1;
  EXPECT_EQ(local_sequences * pipeline_microbatches * p.dp * accumulation_steps(j), w.global_batch);
  EXPECT_EQ(pipeline_microbatches * accumulation_steps(j), p.microbatches(w));
}

TEST(TorchtitanJob, FsdpWithoutPipelineAccumulatesTheStepsMicroBatches) {
  const TorchtitanExport e = export_torchtitan_plan("llama3-70b", "h100-sxm-80gb:64", "tp=8,pp=1,mb=1,gbs=512,seq=8192,recompute=full,zero=3");
  EXPECT_EQ(e.job.dp_shard, 8);
  EXPECT_EQ(e.job.dp_replicate, 1);
  EXPECT_EQ(e.job.tp, 8);
  EXPECT_EQ(accumulation_steps(e.job), 512 / 8);  // gbs / (dp x mb)
  EXPECT_EQ(e.job.activation_checkpoint, "FullAC");
  EXPECT_EQ(e.job.reshard_after_forward, "always");
  expect_batch_semantics(e);
}

TEST(TorchtitanJob, PipelineRunsEveryMicroBatchInOneSchedule) {
  const TorchtitanExport e = export_torchtitan_plan("llama3-70b", "h100-sxm-80gb:256", "tp=8,pp=4,vpp=2,mb=2,gbs=512,seq=8192,recompute=full,zero=3");
  EXPECT_EQ(e.job.num_pp_microbatches, 512 / (8 * 2));
  EXPECT_EQ(accumulation_steps(e.job), 1);
  EXPECT_EQ(e.job.schedule, "Interleaved1F1B");
  EXPECT_TRUE(e.job.disable_cuda_graphs);  // torchtitan refuses CUDA graphs with pp
  expect_batch_semantics(e);
}

TEST(TorchtitanJob, DdpIsReplicateOnly) {
  const TorchtitanExport e = export_torchtitan_plan("llama3-8b", "h100-sxm-80gb:16", "tp=2,pp=1,mb=1,gbs=128,seq=4096,zero=0");
  EXPECT_EQ(e.job.dp_replicate, 8);
  EXPECT_EQ(e.job.dp_shard, 1);
  expect_batch_semantics(e);
}

// Model parts are the plan's layer split in pipeline order, with embedding and output placed as
// torchtitan places them (tok_embeddings on part 0, norm + lm_head on the last part).
TEST(TorchtitanJob, ModelPartsAreThePlansUnevenSplit) {
  const TorchtitanExport e = export_torchtitan_plan("llama3-70b", "h100-sxm-80gb:96", "tp=8,pp=3,vpp=3,mb=1,gbs=384,seq=8192,recompute=full,zero=3");
  const std::vector<std::int64_t> split = layers_per_virtual_stage(e.request.plan, 80);
  EXPECT_EQ(e.job.layers_per_part, split);
  EXPECT_EQ(std::accumulate(split.begin(), split.end(), std::int64_t{0}), 80);
  EXPECT_EQ(e.job.layers_per_part.size(), 9u);
  EXPECT_NE(e.files.recipe_py.find("parts[0].insert(0, \"tok_embeddings\")"), std::string::npos);
  EXPECT_NE(e.files.recipe_py.find("parts[-1].extend([\"norm\", \"lm_head\"])"), std::string::npos);
  // 80 layers over 9 parts: uneven, and the first / last parts (which also hold embedding /
  // output) are never heavier than a middle one.
  EXPECT_NE(*std::min_element(split.begin(), split.end()), *std::max_element(split.begin(), split.end()));
  EXPECT_LE(split.front(), split[1]);
  EXPECT_LE(split.back(), split[1]);
}

// Float8 is on only through a converter in model_registry(converters=...).
TEST(TorchtitanJob, Float8IsEnabledByTheConverter) {
  const TorchtitanExport bf16 = export_torchtitan_plan("llama3-70b", "h100-sxm-80gb:128", "tp=8,pp=1,mb=1,gbs=512,seq=8192,zero=3");
  EXPECT_FALSE(bf16.job.float8_linear);
  const TorchtitanExport fp8 = export_torchtitan_plan("llama3-70b", "h100-sxm-80gb:128",
                                   "tp=8,pp=1,mb=1,gbs=512,seq=8192,zero=3,precision=fp8,fp8_recipe=tensorwise");
  EXPECT_TRUE(fp8.job.float8_linear);
  EXPECT_EQ(fp8.job.float8_recipe, "rowwise");
  const std::size_t call = fp8.files.recipe_py.find("model_registry(");
  const std::size_t converter = fp8.files.recipe_py.find("Float8LinearConverter.Config(");
  const std::size_t trainer = fp8.files.recipe_py.find("Trainer.Config(", call);
  EXPECT_LT(call, converter);
  EXPECT_LT(converter, trainer);
  const TorchtitanExport mx = export_torchtitan_plan("llama3-8b", "b200:16", "tp=1,pp=1,mb=1,gbs=256,seq=8192,zero=3,precision=fp8,fp8_recipe=mxfp8");
  EXPECT_TRUE(mx.job.mxfp8_linear);
  EXPECT_FALSE(mx.job.float8_linear);
}

TEST(TorchtitanJob, ContextParallelUsesFlexAndMoeExpertsTheEpMesh) {
  const TorchtitanExport cp = export_torchtitan_plan("llama3-8b", "h100-sxm-80gb:64", "tp=8,pp=1,cp=4,mb=1,gbs=64,seq=131072,zero=3,recompute=full");
  EXPECT_EQ(cp.job.cp, 4);
  EXPECT_EQ(cp.job.attn_backend, "flex");
  EXPECT_EQ(cp.job.cp_load_balancer, "ptrr");
  const TorchtitanExport moe = export_torchtitan_plan("qwen3-30b-a3b", "h100-sxm-80gb:32", "tp=1,pp=1,ep=8,etp=1,mb=1,gbs=256,seq=4096,zero=3");
  EXPECT_EQ(moe.job.ep, 8);
  EXPECT_EQ(moe.job.module, "qwen3");
  EXPECT_EQ(moe.job.flavor, "30B-A3B");
  EXPECT_TRUE(moe.job.disable_cuda_graphs);
}

TEST(TorchtitanJob, LaunchIsTorchrunOfTheTrainModule) {
  const TorchtitanExport e = export_torchtitan_plan("llama3-70b", "h100-sxm-80gb:64", "tp=8,pp=1,mb=1,gbs=512,seq=8192,zero=3");
  EXPECT_NE(e.files.launch_command.find("-m torchtitan.train --module tessera_recipe --config tessera_plan"),
            std::string::npos);
  EXPECT_EQ(e.job.nnodes, 8);
  EXPECT_EQ(e.job.nproc_per_node, 8);
  EXPECT_NE(e.files.recipe_py.find("def tessera_plan() -> Trainer.Config:"), std::string::npos);
  // The combined text comments the command out so the file stays valid Python.
  const std::string text = torchtitan_job_text(e.files);
  EXPECT_NE(text.find("# torchrun --nnodes=8"), std::string::npos);
  EXPECT_TRUE(torchtitan_violations(e.job, torchtitan_target(load_cluster("h100-sxm-80gb:64"))).empty());
}

// FSDP2's CPU offload (training.enable_cpu_offload) carries parameters, gradients and optimizer
// together: written only when both are on the CPU, read back by the rule table's reader.
TEST(TorchtitanJob, CpuOffloadIsFsdp2sWholeStateOffload) {
  const TorchtitanExport on = export_torchtitan_plan("llama3-70b", "h100-sxm-80gb:64",
                                  "tp=8,pp=1,mb=1,gbs=512,seq=8192,recompute=full,zero=3,framework=torchtitan,"
                                  "offload_optimizer=cpu,offload_params=cpu");
  EXPECT_TRUE(on.job.enable_cpu_offload);
  EXPECT_NE(on.files.recipe_py.find("enable_cpu_offload=True"), std::string::npos);
  EXPECT_TRUE(torchtitan_violations(on.job, torchtitan_target(load_cluster("h100-sxm-80gb:64"))).empty());
  expect_batch_semantics(on);
  const TorchtitanExport off = export_torchtitan_plan("llama3-70b", "h100-sxm-80gb:64", "tp=8,pp=1,mb=1,gbs=512,seq=8192,recompute=full,zero=3");
  EXPECT_FALSE(off.job.enable_cpu_offload);
  EXPECT_EQ(off.files.recipe_py.find("enable_cpu_offload"), std::string::npos);
}

// Offloads FSDP2 cannot express and LoRA tasks are refused naming the plan key (plans changed after
// validation, which refuses most of them first).
TEST(TorchtitanJob, OffloadsAndAdaptersTorchtitanCannotRunAreRefused) {
  const ModelSpec model = builtin_model("llama3-70b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:64");
  const PlanRequest base = load_plan("tp=8,pp=1,mb=1,gbs=512,seq=8192,recompute=full,zero=3", model, cluster);
  auto field_of = [&](MemoryTier optimizer, MemoryTier params, MemoryTier activations) {
    Plan p = base.plan;
    p.offload = {optimizer, params, activations};
    return testing::thrown_field([&] { torchtitan_job(model, p, base.workload, cluster); });
  };
  const MemoryTier gpu = MemoryTier::gpu, cpu = MemoryTier::cpu, nvme = MemoryTier::nvme;
  EXPECT_EQ(field_of(cpu, gpu, gpu), "offload_params");
  EXPECT_EQ(field_of(gpu, cpu, gpu), "offload_optimizer");
  EXPECT_EQ(field_of(nvme, nvme, gpu), "offload_optimizer");
  EXPECT_EQ(field_of(cpu, nvme, gpu), "offload_params");
  EXPECT_EQ(field_of(gpu, gpu, cpu), "offload_activations");
  EXPECT_EQ(field_of(cpu, cpu, cpu), "offload_activations");
  Plan lora = base.plan;
  lora.tuning = {TrainingTask::lora, 8, kDefaultLoraTargets};
  EXPECT_EQ(testing::thrown_field([&] { torchtitan_job(model, lora, base.workload, cluster); }), "task");
}

TEST(TorchtitanJob, PlansTorchtitanCannotRunAreRefusedNamingWhy) {
  const ModelSpec model = builtin_model("llama3-70b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:64");
  const PlanRequest zero1 = load_plan("tp=8,pp=1,mb=1,gbs=512,seq=8192,zero=1", model, cluster);
  EXPECT_EQ(testing::thrown_field([&] { torchtitan_job(model, zero1.plan, zero1.workload, cluster); }), "framework");
  const ModelSpec mixtral = builtin_model("mixtral-8x7b");
  const PlanRequest any = load_plan("tp=8,pp=1,mb=1,gbs=256,seq=4096,zero=3", mixtral, cluster);
  EXPECT_EQ(testing::thrown_field([&] { torchtitan_job(mixtral, any.plan, any.workload, cluster); }), "framework");
}


// What the planner answers with torchtitan when nothing fits on the GPUs (FSDP2's CPUOffloadPolicy,
// parameters and optimizer together): every one of the best plans exports and passes the rules.
TEST(TorchtitanJob, PlannedOffloadPlansPassTheRules) {
  const testing::OffloadPlannerCase kCases[] = {{"llama3-8b", "a100-sxm-40gb:1", 8, 4096},
                                                {"llama3-70b", "h100-sxm-80gb:4", 16, 4096}};
  int offloaded = 0;
  for (const testing::OffloadPlannerCase& pc : kCases) {
    const testing::PlannedOffloadCase c = testing::plan_with_offload(pc, TrainingFramework::torchtitan);
    ASSERT_FALSE(c.found.search.plans.empty()) << c.name();
    for (const RankedPlan& r : c.found.search.plans) {
      const TorchtitanJobFiles files = torchtitan_job(c.model, r.plan, c.workload, c.cluster);
      const TorchtitanJob job = parse_torchtitan_job(files.recipe_py, files.launch_command);
      EXPECT_TRUE(torchtitan_violations(job, torchtitan_target(c.cluster)).empty()) << c.name();
      EXPECT_EQ(job.enable_cpu_offload, r.plan.offload.params == MemoryTier::cpu);
      offloaded += r.plan.offload.any_offload() ? 1 : 0;
    }
  }
  EXPECT_GE(offloaded, 2);
}

}  // namespace
}  // namespace tessera
