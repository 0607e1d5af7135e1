#include "export/megatron_launch.h"

#include <cstdlib>
#include <iostream>
#include <set>

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "common/export_cases.h"
#include "common/offload_planner_case.h"
#include "common/thrown_field.h"
#include "export/megatron_rules.h"
#include "formats/megatron_args.h"
#include "formats/plan_constraints_text.h"
#include "formats/plan_text.h"
#include "report/plan_report.h"
#include "search/planner.h"

namespace tessera {
namespace {

struct ExportCoverage {
  std::set<std::string> flavours;  // sharding: none, distributed-optimizer, megatron-fsdp
  bool moe = false, mla = false, gpt_oss = false, cp = false, vpp_uneven = false, fp8 = false;
  int exported = 0;
  std::set<std::string> refused;  // "model: field" of plans Megatron cannot express
};

bool has_flag(const std::vector<std::string>& a, const std::string& flag) {
  return std::find(a.begin(), a.end(), flag) != a.end();
}

void record(const ModelSpec& m, const Plan& p, const std::vector<std::string>& a, ExportCoverage& c) {
  ++c.exported;
  c.flavours.insert(has_flag(a, "--use-megatron-fsdp")           ? "megatron-fsdp"
                    : has_flag(a, "--use-distributed-optimizer") ? "distributed-optimizer"
                                                                 : "none");
  c.moe = c.moe || m.is_moe();
  c.mla = c.mla || m.attention == AttentionKind::mla;
  c.gpt_oss = c.gpt_oss || (m.attention_sinks && m.glu_quick_gelu);
  c.cp = c.cp || p.cp > 1;
  c.vpp_uneven = c.vpp_uneven || has_flag(a, "--pipeline-model-parallel-layout");
  c.fp8 = c.fp8 || p.precision == Precision::fp8;
}

// The planner's best plan and top 5 of every export case, as the CLI searches them (bf16 and fp8
// unless pinned), each exported and checked against the rule table. The planner takes up to
// ~1.5 s a case in Release; under the sanitizers (~10x slower) every eighth case runs.
TEST(MegatronExport, TopPlansOfEveryCasePassTheRuleTable) {
#if defined(TESSERA_SANITIZED)
  constexpr std::size_t kStride = 8;
#else
  constexpr std::size_t kStride = 1;
#endif
  ExportCoverage coverage;
  for (std::size_t i = 0; i < testing::kExportCases.size(); i += kStride) {
    const auto& ec = testing::kExportCases[i];
    const ModelSpec model = builtin_model(ec.model);
    const Cluster cluster = load_cluster(ec.cluster);
    PlanConstraints fix = parse_constraints(ec.fix);
    if (!fix.precision) fix.precision_choices = {Precision::bf16, Precision::fp8};
    const Workload w{ec.gbs, ec.seq > 0 ? ec.seq : model.max_context};
    PlannerOptions options;
    options.top_k = 5;
    const PlanSearch search = search_plans(model, cluster, w, fix, options);
    ASSERT_FALSE(search.plans.empty()) << ec.model << " on " << ec.cluster;
    for (const auto& ranked : search.plans) {
      std::vector<std::string> args;
      try {
        args = megatron_args(model, ranked.plan, w);
      } catch (const Error& e) {
        coverage.refused.insert(model.name + ": " + e.field());
        continue;
      }
      const auto violations = check_megatron_args(args, megatron_environment(ranked.plan));
      EXPECT_TRUE(violations.empty()) << ec.model << " " << ec.cluster << ": " << violations.front().id;
      record(model, ranked.plan, args, coverage);
    }
  }
  // Only BLOOM (ALiBi and its embedding norm: no Megatron-LM flag) may be refused.
  for (const auto& r : coverage.refused) EXPECT_EQ(r.rfind("bloom-176b:", 0), 0u) << r;
  EXPECT_GT(coverage.exported, 100 / static_cast<int>(kStride));
  if (kStride == 1) {
    EXPECT_TRUE(coverage.moe);
    EXPECT_TRUE(coverage.mla);
    EXPECT_TRUE(coverage.gpt_oss);
    EXPECT_TRUE(coverage.cp);
    EXPECT_TRUE(coverage.vpp_uneven);
    EXPECT_TRUE(coverage.fp8);
    EXPECT_EQ(coverage.flavours, (std::set<std::string>{"none", "distributed-optimizer", "megatron-fsdp"}));
  }
}

PlanRequest plan_for(const ModelSpec& model, const char* cluster, const char* text) {
  return load_plan(text, model, load_cluster(cluster));
}

std::string value_of(const std::vector<std::string>& a, const std::string& flag) {
  const auto it = std::find(a.begin(), a.end(), flag);
  return it == a.end() || it + 1 == a.end() ? "" : *(it + 1);
}

TEST(MegatronExport, UnevenInterleavedStagesBecomeAnExplicitLayout) {
  // 80 layers over pp 3 x vpp 3: Megatron's first/last flags would split rank 0's layers evenly
  // over its chunks; the layout says each virtual stage's layers exactly.
  const ModelSpec m = builtin_model("llama3-70b");
  const PlanRequest r = plan_for(m, "h100-sxm-80gb:96", "tp=8,pp=3,vpp=3,mb=1,gbs=384,seq=8192,zero=1");
  const auto a = megatron_args(m, r.plan, r.workload);
  const auto stages = megatron_layout_stages(value_of(a, "--pipeline-model-parallel-layout"));
  const auto layers = layers_per_virtual_stage(r.plan, m.layers);
  ASSERT_EQ(stages.size(), layers.size());
  for (std::size_t k = 0; k < stages.size(); ++k)
    EXPECT_EQ(std::count(stages[k].begin(), stages[k].end(), 't'), layers[k]) << k;
  EXPECT_EQ(stages.front().front(), 'E');
  EXPECT_EQ(stages.back().back(), 'L');
  EXPECT_FALSE(has_flag(a, "--decoder-first-pipeline-num-layers"));
  EXPECT_FALSE(has_flag(a, "--num-virtual-stages-per-pipeline-rank"));
}

// Uneven interleaved splits as exported: the layout passes the rule table (megatron_args throws
// otherwise), each chunk's 't' count is the cost model's, no chunk exceeds ceil(L / (pp vpp)),
// and the layout reads back to the same plan.
TEST(MegatronExport, UnevenInterleavedLayoutsPassTheRules) {
  struct Case {
    const char* model;
    const char* cluster;
    const char* plan;
  };
  for (const Case& c : {Case{"llama3-70b", "h100-sxm-80gb:512", "tp=8,pp=8,vpp=4,mb=1,gbs=1024,seq=8192,zero=1"},
                        Case{"llama3-70b", "h100-sxm-80gb:512", "tp=8,pp=8,vpp=6,mb=1,gbs=1024,seq=8192,zero=1"},
                        Case{"llama3-70b", "h100-sxm-80gb:144", "tp=8,pp=6,vpp=3,mb=1,gbs=288,seq=8192,zero=1"},
                        Case{"deepseek-v3", "h800:1024", "tp=1,pp=8,vpp=4,ep=64,mb=1,gbs=4096,seq=4096,zero=1"}}) {
    const ModelSpec m = builtin_model(c.model);
    const PlanRequest r = plan_for(m, c.cluster, c.plan);
    const auto a = megatron_args(m, r.plan, r.workload);
    const auto stages = megatron_layout_stages(value_of(a, "--pipeline-model-parallel-layout"));
    const auto layers = layers_per_virtual_stage(r.plan, m.layers);
    ASSERT_EQ(stages.size(), layers.size()) << c.plan;
    const std::int64_t widest = (m.layers + r.plan.pp * r.plan.vpp - 1) / (r.plan.pp * r.plan.vpp);
    for (std::size_t k = 0; k < stages.size(); ++k) {
      EXPECT_EQ(std::count(stages[k].begin(), stages[k].end(), 't'), layers[k]) << c.plan << " chunk " << k;
      EXPECT_LE(layers[k], widest) << c.plan << " chunk " << k;
    }
    const PlanRequest back = plan_from_megatron_args(a, m, load_cluster(c.cluster));
    EXPECT_EQ(layers_per_virtual_stage(back.plan, m.layers), layers) << c.plan;
  }
}

// The embedding and loss accounted as layers (the ModelZoo's Qwen3-235B at pp 32 x vpp 3: the
// first chunk the embedding alone, the last the loss alone) go out as Megatron's own flags, pass
// the rule table, and read back to the same split.
TEST(MegatronExport, AccountedEmbeddingAndLossGoOutAsMegatronsFlags) {
  const ModelSpec m = builtin_model("qwen3-235b-a22b");
  const char* cluster = "h100-sxm-80gb:256";
  const PlanRequest r =
      plan_for(m, cluster, "tp=2,pp=32,vpp=3,ep=8,etp=1,mb=1,gbs=2048,seq=4096,zero=1,account_embedding=1,account_loss=1");
  const auto a = megatron_args(m, r.plan, r.workload);
  EXPECT_TRUE(has_flag(a, "--account-for-embedding-in-pipeline-split"));
  EXPECT_TRUE(has_flag(a, "--account-for-loss-in-pipeline-split"));
  EXPECT_EQ(value_of(a, "--num-virtual-stages-per-pipeline-rank"), "3");
  EXPECT_FALSE(has_flag(a, "--pipeline-model-parallel-layout"));
  const PlanRequest back = plan_from_megatron_args(a, m, load_cluster(cluster));
  EXPECT_TRUE(back.plan.account_embedding && back.plan.account_loss);
  const auto layers = layers_per_virtual_stage(r.plan, m.layers);
  EXPECT_EQ(layers_per_virtual_stage(back.plan, m.layers), layers);
  EXPECT_EQ(layers.front(), 0);
  EXPECT_EQ(layers.back(), 0);
}

TEST(MegatronExport, MtpModulesSitBeforeTheLossOnTheLastStage) {
  const ModelSpec m = builtin_model("deepseek-v3");
  const PlanRequest r = plan_for(m, "h800:1024", "tp=1,pp=16,vpp=2,ep=64,mb=1,gbs=4096,seq=4096,zero=1");
  const auto a = megatron_args(m, r.plan, r.workload);
  const std::string layout = value_of(a, "--pipeline-model-parallel-layout");
  if (layout.empty()) GTEST_SKIP() << "even split";
  const auto stages = megatron_layout_stages(layout);
  EXPECT_EQ(stages.back().substr(stages.back().size() - 2), "mL");
}

TEST(MegatronExport, UnevenStagesWithoutInterleavingCountWholeRanks) {
  const ModelSpec m = builtin_model("llama3-70b");
  const PlanRequest r = plan_for(m, "h100-sxm-80gb:48", "tp=8,pp=6,mb=1,gbs=48,seq=8192,first_stage_layers=10,last_stage_layers=10");
  const auto a = megatron_args(m, r.plan, r.workload);
  EXPECT_EQ(value_of(a, "--decoder-first-pipeline-num-layers"), "10");
  EXPECT_EQ(value_of(a, "--decoder-last-pipeline-num-layers"), "10");
}

TEST(MegatronExport, ShardingFlavours) {
  const ModelSpec m = builtin_model("llama3-8b");
  auto args = [&](const char* zero) {
    const PlanRequest r = plan_for(m, "h100-sxm-80gb:16", (std::string("tp=2,pp=2,mb=1,gbs=64,seq=8192,") + zero).c_str());
    return megatron_args(m, r.plan, r.workload);
  };
  EXPECT_FALSE(has_flag(args("zero=0"), "--overlap-param-gather"));
  EXPECT_TRUE(has_flag(args("zero=1"), "--use-distributed-optimizer"));
  EXPECT_EQ(value_of(args("zero=2"), "--data-parallel-sharding-strategy"), "optim_grads");
  EXPECT_EQ(value_of(args("zero=3"), "--data-parallel-sharding-strategy"), "optim_grads_params");
  EXPECT_EQ(value_of(args("zero=3"), "--ckpt-format"), "fsdp_dtensor");
  for (const char* zero : {"zero=0", "zero=1", "zero=2", "zero=3"}) EXPECT_FALSE(has_flag(args(zero), "--use-torch-fsdp2"));
}

// plan --failures: the recommended interval as --save-interval, async saving with the persistent
// worker (and torch_dist unless the plan names its format), the first-replica save; each list
// passes the rule table (megatron_args checks it), and a negative interval is refused.
TEST(MegatronExport, CheckpointFlags) {
  const ModelSpec m = builtin_model("llama3-8b");
  const PlanRequest r = plan_for(m, "h100-sxm-80gb:16", "tp=2,pp=2,mb=1,gbs=64,seq=8192,zero=1");
  EXPECT_FALSE(has_flag(megatron_args(m, r.plan, r.workload), "--save-interval"));
  const auto a = megatron_args(m, r.plan, r.workload, {250, true, false});
  EXPECT_EQ(value_of(a, "--save-interval"), "250");
  EXPECT_TRUE(has_flag(a, "--async-save"));
  EXPECT_TRUE(has_flag(a, "--use-persistent-ckpt-worker"));
  EXPECT_EQ(value_of(a, "--ckpt-format"), "torch_dist");
  EXPECT_TRUE(has_flag(a, "--no-ckpt-fully-parallel-save"));
  EXPECT_TRUE(check_megatron_args(a, megatron_environment(r.plan)).empty());
  const PlanRequest fsdp = plan_for(m, "h100-sxm-80gb:16", "tp=2,pp=2,mb=1,gbs=64,seq=8192,zero=3");
  const auto f = megatron_args(m, fsdp.plan, fsdp.workload, {100, true, true});
  EXPECT_EQ(value_of(f, "--ckpt-format"), "fsdp_dtensor");
  EXPECT_EQ(std::count(f.begin(), f.end(), "--ckpt-format"), 1);
  EXPECT_EQ(testing::thrown_field([&] { megatron_args(m, r.plan, r.workload, {-1, false, true}); }), "save_interval");
  // The launch script carries the interval as SAVE_INTERVAL's default, next to --save.
  const std::string script = megatron_launch_script(m, load_cluster("h100-sxm-80gb:16"), r.plan, r.workload, {250, false, true});
  EXPECT_NE(script.find("SAVE_INTERVAL=${SAVE_INTERVAL:-250}"), std::string::npos);
  EXPECT_EQ(script.find("--save-interval 250"), std::string::npos);
}

TEST(MegatronExport, EnvironmentFollowsTheSharding) {
  Plan p;
  p.tp = 2;
  EXPECT_EQ(megatron_environment(p).at("CUDA_DEVICE_MAX_CONNECTIONS"), "1");
  p.zero = OptimizerSharding::zero3;
  EXPECT_TRUE(megatron_environment(p).empty());  // Megatron-FSDP needs it unset or > 1
  p.tp = 1;
  p.zero = OptimizerSharding::none;
  EXPECT_TRUE(megatron_environment(p).empty());
}

TEST(MegatronExport, PlansMegatronCannotExpressAreRefused) {
  const ModelSpec bloom = builtin_model("bloom-176b");
  const PlanRequest r = plan_for(bloom, "a100-sxm-80gb:64", "tp=8,pp=8,mb=1,gbs=64,seq=2048");
  EXPECT_EQ(testing::thrown_field([&] { megatron_args(bloom, r.plan, r.workload); }), "model.position");
  ModelSpec capped = builtin_model("llama3-8b");
  capped.attention_logit_softcap = 50;
  const PlanRequest c = plan_for(capped, "h100-sxm-80gb:8", "tp=8,mb=1,gbs=8,seq=8192");
  EXPECT_EQ(testing::thrown_field([&] { megatron_args(capped, c.plan, c.workload); }), "model.attention_logit_softcap");
  const ModelSpec llama = builtin_model("llama3-8b");
  // validate_plan refuses TP overlap without sequence parallelism first; the exporter's own guard
  // holds for a plan changed after validation.
  EXPECT_EQ(testing::thrown_field([&] { plan_for(llama, "h100-sxm-80gb:8", "tp=8,mb=1,gbs=8,seq=8192,overlap_tp=1,sp=0"); }),
            "overlap_tp");
  PlanRequest g = plan_for(llama, "h100-sxm-80gb:8", "tp=8,mb=1,gbs=8,seq=8192,sp=0");
  g.plan.overlap_tp_comm = true;
  EXPECT_EQ(testing::thrown_field([&] { megatron_args(llama, g.plan, g.workload); }), "overlap_tp");
}

// Optimizer on the CPU: --optimizer-cpu-offload with all of the state (fraction 1.0, what the cost
// model prices) and the precision-aware optimizer validate_args requires, on the distributed
// optimizer; activations on the CPU: Transformer Engine's layer offload for all layers but the
// cost model's GPU window. Both lists pass the rule table.
TEST(MegatronExport, OffloadFlags) {
  const ModelSpec m = builtin_model("llama3-8b");
  const PlanRequest opt = plan_for(m, "h100-sxm-80gb:16", "tp=2,pp=2,mb=1,gbs=64,seq=8192,zero=1,offload_optimizer=cpu");
  const auto a = megatron_args(m, opt.plan, opt.workload);
  EXPECT_TRUE(has_flag(a, "--optimizer-cpu-offload"));
  EXPECT_EQ(value_of(a, "--optimizer-offload-fraction"), "1.0");
  EXPECT_TRUE(has_flag(a, "--use-precision-aware-optimizer"));
  EXPECT_TRUE(has_flag(a, "--use-distributed-optimizer"));
  EXPECT_FALSE(has_flag(a, "--cpu-offloading-num-layers"));
  EXPECT_TRUE(check_megatron_args(a, megatron_environment(opt.plan)).empty());
  const PlanRequest fsdp = plan_for(m, "h100-sxm-80gb:16", "tp=2,pp=2,mb=1,gbs=64,seq=8192,zero=3,offload_optimizer=cpu");
  EXPECT_TRUE(has_flag(megatron_args(m, fsdp.plan, fsdp.workload), "--optimizer-cpu-offload"));
  const PlanRequest act = plan_for(m, "h100-sxm-80gb:16", "tp=2,pp=1,mb=1,gbs=64,seq=8192,zero=1,offload_activations=cpu");
  const auto b = megatron_args(m, act.plan, act.workload);
  EXPECT_EQ(value_of(b, "--cpu-offloading-num-layers"), std::to_string(m.layers - 2));
  EXPECT_FALSE(has_flag(b, "--optimizer-cpu-offload"));
  EXPECT_FALSE(has_flag(b, "--recompute-granularity"));
}

// What Megatron cannot do is refused naming the plan key (plans changed after validation, since
// validate_plan refuses most of them first).
TEST(MegatronExport, OffloadsAndAdaptersMegatronCannotRunAreRefused) {
  const ModelSpec m = builtin_model("llama3-8b");
  const PlanRequest base = plan_for(m, "h100-sxm-80gb:16", "tp=2,pp=2,mb=1,gbs=64,seq=8192,zero=1");
  auto field_of = [&](auto change) {
    Plan p = base.plan;
    change(p);
    return testing::thrown_field([&] { megatron_args(m, p, base.workload); });
  };
  EXPECT_EQ(field_of([](Plan& p) { p.offload.params = MemoryTier::cpu; }), "offload_params");
  EXPECT_EQ(field_of([](Plan& p) { p.offload.optimizer = MemoryTier::nvme; }), "offload_optimizer");
  EXPECT_EQ(field_of([](Plan& p) { p.offload.optimizer = MemoryTier::cpu, p.zero = OptimizerSharding::none; }),
            "offload_optimizer");
  EXPECT_EQ(field_of([](Plan& p) { p.offload.activations = MemoryTier::cpu; }), "offload_activations");  // pp = 2
  EXPECT_EQ(field_of([](Plan& p) { p.offload.activations = MemoryTier::cpu, p.pp = 1, p.dp = 8, p.recompute = Recompute::full; }),
            "offload_activations");
  EXPECT_EQ(field_of([](Plan& p) { p.offload.activations = MemoryTier::nvme; }), "offload_activations");
  EXPECT_EQ(field_of([](Plan& p) {
              p.offload.optimizer = MemoryTier::cpu, p.precision = Precision::fp8, p.fp8_param_gather = true;
            }),
            "fp8_param_gather");
  EXPECT_EQ(field_of([](Plan& p) { p.tuning = {TrainingTask::lora, 8, kDefaultLoraTargets}; }), "task");
  EXPECT_EQ(field_of([](Plan& p) { p.tuning = {TrainingTask::qlora, 16, kDefaultLoraTargets}; }), "task");
}

TEST(MegatronExport, MaxPositionsCoverTheSequence) {
  const ModelSpec m = builtin_model("llama3-8b");  // 8192 context
  const PlanRequest r = plan_for(m, "h100-sxm-80gb:64", "tp=8,cp=8,mb=1,gbs=8,seq=131072");
  const auto a = megatron_args(m, r.plan, r.workload);
  EXPECT_EQ(value_of(a, "--max-position-embeddings"), "131072");
}

// The script's PLAN_ARGS array, one token per word (quotes removed).
std::vector<std::string> plan_args_in(const std::string& script) {
  const auto begin = script.find("PLAN_ARGS=(\n");
  const auto end = script.find("\n)\n", begin);
  std::vector<std::string> out;
  std::string word;
  for (char ch : script.substr(begin + 12, end - begin - 12)) {
    if (ch == ' ' || ch == '\n') {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else if (ch != '\'') {
      word += ch;
    }
  }
  if (!word.empty()) out.push_back(word);
  return out;
}

void expect_launchable(const char* model_name, const char* cluster_name, const char* plan_text, std::int64_t nodes) {
  const ModelSpec m = builtin_model(model_name);
  const Cluster c = load_cluster(cluster_name);
  const PlanRequest r = load_plan(plan_text, m, c);
  const std::string s = megatron_launch_script(m, c, r.plan, r.workload);
  EXPECT_EQ(s.rfind("#!/bin/bash\n", 0), 0u);
  EXPECT_NE(s.find("set -euo pipefail"), std::string::npos);
  EXPECT_NE(s.find("NNODES=${NNODES:-" + std::to_string(nodes) + "}"), std::string::npos);
  EXPECT_NE(s.find("DATA_PATH=${DATA_PATH:?"), std::string::npos);
  EXPECT_NE(s.find("TOKENIZER_MODEL=${TOKENIZER_MODEL:?"), std::string::npos);
  EXPECT_NE(s.find("torchrun --nnodes \"$NNODES\" --nproc-per-node \"$GPUS_PER_NODE\""), std::string::npos);
  EXPECT_NE(s.find("srun --nodes " + std::to_string(nodes)), std::string::npos);
  EXPECT_EQ(plan_args_in(s), megatron_args(m, r.plan, r.workload));  // one source of truth
  if (std::getenv("TESSERA_PRINT_LAUNCH_SCRIPTS")) std::cout << s << "\n";
}

TEST(MegatronLaunchScript, DenseAndMoeBestPlans) {
  for (const auto& [model, cluster, gbs, seq, nodes] :
       {std::tuple{"llama3-70b", "h100-sxm-80gb:64", 512, 8192, 8}, std::tuple{"deepseek-v3", "h800:1024", 4096, 4096, 128}}) {
    const ModelSpec m = builtin_model(model);
    const Cluster c = load_cluster(cluster);
    const PlanSearch best = search_plans(m, c, Workload{gbs, seq}, PlanConstraints{}, PlannerOptions{});
    ASSERT_FALSE(best.plans.empty());
    expect_launchable(model, cluster, plan_to_shorthand(best.plans.front().plan, Workload{gbs, seq}).c_str(), nodes);
  }
}


// What the planner answers with Megatron when nothing fits on the GPUs: the optimizer on the CPU
// (and activations, on one stage without recomputation), each of the best plans exported and
// passing the rule table (megatron_args checks it and throws), its flags saying the placement.
TEST(MegatronExport, PlannedOffloadPlansPassTheRuleTable) {
  const testing::OffloadPlannerCase kCases[] = {{"llama3-8b", "a100-sxm-80gb:1", 8, 4096},
                                                {"llama3-8b", "h100-sxm-80gb:1", 16, 8192},
                                                {"qwen2.5-32b", "h100-sxm-80gb:4", 16, 4096},
                                                {"llama3-70b", "a100-sxm-40gb:16", 32, 4096}};
  int offloaded = 0;
  for (const testing::OffloadPlannerCase& pc : kCases) {
    const testing::PlannedOffloadCase c = testing::plan_with_offload(pc, TrainingFramework::megatron);
    ASSERT_FALSE(c.found.search.plans.empty()) << c.name();
    for (const RankedPlan& r : c.found.search.plans) {
      const auto args = megatron_args(c.model, r.plan, c.workload);
      EXPECT_EQ(has_flag(args, "--optimizer-cpu-offload"), r.plan.offload.optimizer == MemoryTier::cpu);
      EXPECT_EQ(has_flag(args, "--cpu-offloading-num-layers"), r.plan.offload.activations == MemoryTier::cpu);
      offloaded += r.plan.offload.any_offload() ? 1 : 0;
    }
  }
  EXPECT_GE(offloaded, 10);
}

}  // namespace
}  // namespace tessera
