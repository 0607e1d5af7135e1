// Megatron-LM arguments: every plan field Megatron can express survives plan -> args -> plan.
#include <gtest/gtest.h>

#include <algorithm>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "common/thrown_field.h"
#include "core/error.h"
#include "export/megatron_launch.h"
#include "export/megatron_rules.h"
#include "formats/megatron_args.h"
#include "formats/plan_text.h"

namespace tessera {
namespace {

using testing::thrown_field;

bool has_flag(const std::vector<std::string>& args, const std::string& flag) {
  return std::find(args.begin(), args.end(), flag) != args.end();
}

std::string value_of(const std::vector<std::string>& args, const std::string& flag) {
  const auto it = std::find(args.begin(), args.end(), flag);
  return it == args.end() || it + 1 == args.end() ? "" : *(it + 1);
}

void expect_round_trip(const std::string& model_name, const std::string& cluster_text, const std::string& plan_text) {
  const ModelSpec model = builtin_model(model_name);
  const Cluster cluster = load_cluster(cluster_text);
  const PlanRequest original = load_plan(plan_text, model, cluster);
  const auto args = megatron_args(model, original.plan, original.workload);
  const PlanRequest back = plan_from_megatron_args(args, model, cluster);
  EXPECT_EQ(plan_to_shorthand(back.plan, back.workload), plan_to_shorthand(original.plan, original.workload))
      << plan_text;
}

TEST(MegatronArgs, RoundTripsThePlan) {
  expect_round_trip("gpt3-175b", "a100-sxm-80gb:1024", "tp=8,pp=16,mb=1,gbs=1536,seq=2048,recompute=full,sp=0");
  expect_round_trip("llama3-70b", "h100-sxm-80gb:1024", "tp=8,pp=4,vpp=5,mb=1,gbs=1024,seq=8192,recompute=selective,zero=1");
  expect_round_trip("llama3.1-405b", "h100-sxm-80gb:16384", "tp=8,pp=16,cp=2,vpp=2,mb=1,gbs=2048,seq=8192,zero=1,precision=fp8");
  expect_round_trip("mixtral-8x7b", "h100-sxm-80gb:64", "tp=2,pp=2,ep=8,mb=2,gbs=256,seq=4096,zero=1,overlap_tp=1");
  // (BLOOM's ALiBi has no Megatron-LM flag: export refuses it, so GPT-3 carries these switches.)
  expect_round_trip("gpt3-175b", "a100-sxm-80gb:384", "tp=4,pp=12,mb=2,gbs=2048,seq=2048,recompute=full,sp=0,overlap_grad=0,overlap_p2p=0,flash=0");
  // Uneven interleaved stages travel as an explicit --pipeline-model-parallel-layout; ZeRO-2 as
  // Megatron-FSDP optim_grads.
  expect_round_trip("llama3-70b", "h100-sxm-80gb:96", "tp=8,pp=3,vpp=3,mb=1,gbs=384,seq=8192,zero=1");
  expect_round_trip("llama3-8b", "h100-sxm-80gb:16", "tp=2,pp=2,mb=1,gbs=64,seq=8192,zero=2");
  expect_round_trip("llama3-8b", "h100-sxm-80gb:8", "tp=1,mb=2,gbs=16,seq=8192,recompute=selective,zero=3");
  expect_round_trip("llama3-70b", "h100-sxm-80gb:256", "tp=8,pp=4,mb=1,gbs=256,seq=8192,recompute=full,recompute_layers=5");
}

// The flags a Megatron user looks for, with the values of the plan.
TEST(MegatronArgs, CarriesDegreesBatchRecomputeAndShape) {
  const ModelSpec model = builtin_model("llama3.1-405b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:16384");
  const PlanRequest r = load_plan("tp=8,pp=16,vpp=4,mb=1,gbs=2048,seq=8192,recompute=full,zero=1", model, cluster);
  const auto a = megatron_args(model, r.plan, r.workload);
  EXPECT_EQ(value_of(a, "--tensor-model-parallel-size"), "8");
  EXPECT_EQ(value_of(a, "--pipeline-model-parallel-size"), "16");
  EXPECT_EQ(value_of(a, "--micro-batch-size"), "1");
  EXPECT_EQ(value_of(a, "--global-batch-size"), "2048");
  EXPECT_EQ(value_of(a, "--recompute-granularity"), "full");
  EXPECT_TRUE(has_flag(a, "--sequence-parallel"));
  EXPECT_TRUE(has_flag(a, "--use-distributed-optimizer"));
  EXPECT_TRUE(has_flag(a, "--overlap-grad-reduce"));
  EXPECT_EQ(value_of(a, "--num-layers"), "126");
  EXPECT_EQ(value_of(a, "--num-query-groups"), "8");
  EXPECT_TRUE(has_flag(a, "--swiglu"));
  // 126 layers over 16 x 4 virtual stages, the first and last shorter: Megatron's
  // --decoder-first/last-pipeline-num-layers count a whole rank (split evenly over its chunks),
  // so the split is an explicit layout of 64 stages with 62 x 2 + first + last layers.
  EXPECT_FALSE(has_flag(a, "--decoder-first-pipeline-num-layers"));
  const auto stages = megatron_layout_stages(value_of(a, "--pipeline-model-parallel-layout"));
  ASSERT_EQ(stages.size(), 64u);
  std::size_t layers = 0;
  for (const auto& stage : stages) layers += std::count(stage.begin(), stage.end(), 't');
  EXPECT_EQ(layers, 126u);
}

// Issue 13, D11: argparse would keep the last of two values; Tessera refuses the flag by name.
TEST(MegatronArgs, FlagGivenTwiceIsAnErrorNamingIt) {
  const ModelSpec model = builtin_model("llama3-8b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:8");
  EXPECT_EQ(thrown_field([&] {
              (void)plan_from_megatron_args({"--tensor-model-parallel-size", "2", "--global-batch-size", "8",
                                             "--tensor-model-parallel-size", "4"}, model, cluster);
            }),
            "--tensor-model-parallel-size");
  EXPECT_EQ(thrown_field([&] {
              (void)plan_from_megatron_args({"--global-batch-size", "8", "--sequence-parallel", "--sequence-parallel"},
                                            model, cluster);
            }),
            "--sequence-parallel");
}

// Found by fuzz_megatron_args: a zero pipeline size with a per-chunk layer count divided by zero.
TEST(MegatronArgs, PipelineSizeIsCheckedBeforeItDivides) {
  const ModelSpec model = builtin_model("llama3-8b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:8");
  for (const char* pp : {"0", "-2", "33"})
    EXPECT_EQ(thrown_field([&] {
                (void)plan_from_megatron_args({"--pipeline-model-parallel-size", pp, "--num-layers-per-virtual-pipeline-stage",
                                               "1", "--global-batch-size", "8"}, model, cluster);
              }),
              "--pipeline-model-parallel-size")
        << pp;
  EXPECT_EQ(thrown_field([&] {
              (void)plan_from_megatron_args({"--pipeline-model-parallel-size", "2", "--num-layers-per-virtual-pipeline-stage",
                                             "9223372036854775807", "--global-batch-size", "8"}, model, cluster);
            }),
            "--num-layers-per-virtual-pipeline-stage");
}

TEST(MegatronArgs, UnknownFlagIsAnErrorNamingIt) {
  const ModelSpec model = builtin_model("llama3-8b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:8");
  try {
    plan_from_megatron_args({"--tensor-model-parallel-size", "2", "--frobnicate"}, model, cluster);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "--frobnicate");
  }
  EXPECT_THROW(plan_from_megatron_args({"--tensor-model-parallel-size"}, model, cluster), Error);
  EXPECT_THROW(plan_from_megatron_args({"--tensor-model-parallel-size", "x", "--global-batch-size", "8"}, model, cluster), Error);
}


}  // namespace
}  // namespace tessera

// ---- Issue 11: the MoE, FP8 and recompute-module flags, each rule from Megatron-LM d98e8a64 ------
namespace tessera {
namespace {

struct Exported {
  ModelSpec model;
  Cluster cluster;
  PlanRequest request;
  std::vector<std::string> args;
};

Exported exported(const std::string& model_name, const std::string& cluster_text, const std::string& plan_text) {
  Exported e{builtin_model(model_name), load_cluster(cluster_text), {}, {}};
  e.request = load_plan(plan_text, e.model, e.cluster);
  e.args = megatron_args(e.model, e.request.plan, e.request.workload);
  return e;
}

// Values of a list flag (nargs): the tokens up to the next flag.
std::vector<std::string> list_of(const std::vector<std::string>& args, const std::string& flag) {
  std::vector<std::string> out;
  auto it = std::find(args.begin(), args.end(), flag);
  if (it == args.end()) return out;
  for (++it; it != args.end() && it->rfind("--", 0) != 0; ++it) out.push_back(*it);
  return out;
}

constexpr const char* kMixtral = "tp=2,pp=2,ep=8,mb=1,gbs=256,seq=4096,zero=1";

TEST(MegatronMoeArgs, RoundTripsEveryNewKey) {
  expect_round_trip("mixtral-8x7b", "h100-sxm-80gb:64", "tp=2,pp=2,vpp=2,ep=8,etp=1,mb=1,gbs=256,seq=4096,zero=1,"
                    "dispatcher=flex,overlap_ep=1,delay_wgrad=1,recompute=selective,recompute_modules=layernorm+moe_act,"
                    "precision=fp8,fp8_recipe=blockwise,fp8_param_gather=1,capacity_factor=1.25,force_balance=1");
  expect_round_trip("deepseek-v3", "h100-sxm-80gb:1024", "tp=2,pp=16,ep=64,etp=1,mb=1,gbs=8192,seq=4096,"
                    "recompute=selective,recompute_modules=mla_up_proj,zero=1,"
                    "capacity_factor=1");
  expect_round_trip("mixtral-8x7b", "h100-sxm-80gb:64", "tp=2,pp=2,ep=8,mb=1,gbs=256,seq=4096,zero=3,dispatcher=allgather");
}

// Megatron's default expert tensor parallelism is tp: stated for every MoE plan.
TEST(MegatronMoeArgs, ExpertTensorParallelSize) {
  EXPECT_EQ(value_of(exported("mixtral-8x7b", "h100-sxm-80gb:64", kMixtral).args, "--expert-tensor-parallel-size"), "2");
  EXPECT_EQ(value_of(exported("mixtral-8x7b", "h100-sxm-80gb:64", std::string(kMixtral) + ",etp=1").args,
                     "--expert-tensor-parallel-size"), "1");
  EXPECT_FALSE(has_flag(exported("llama3-8b", "h100-sxm-80gb:8", "tp=2,mb=1,gbs=8,seq=4096").args,
                        "--expert-tensor-parallel-size"));
}

// Megatron's default dispatcher is allgather, so ours is always named; a flag-less import reads
// allgather.
TEST(MegatronMoeArgs, DispatcherIsAlwaysNamed) {
  const Exported e = exported("mixtral-8x7b", "h100-sxm-80gb:64", kMixtral);
  EXPECT_EQ(value_of(e.args, "--moe-token-dispatcher-type"), "alltoall");
  const PlanRequest back = plan_from_megatron_args({"--tensor-model-parallel-size", "2", "--pipeline-model-parallel-size", "2",
                                                    "--expert-model-parallel-size", "8", "--global-batch-size", "256",
                                                    "--seq-length", "4096"}, e.model, e.cluster);
  EXPECT_EQ(back.plan.dispatcher, MoeDispatcher::allgather);
}

// flex runs DeepEP, except with capacity padding, which DeepEP rejects (HybridEP pads).
TEST(MegatronMoeArgs, FlexBackendFollowsPadding) {
  EXPECT_EQ(value_of(exported("mixtral-8x7b", "h100-sxm-80gb:64", std::string(kMixtral) + ",dispatcher=flex").args,
                     "--moe-flex-dispatcher-backend"), "deepep");
  EXPECT_EQ(value_of(exported("mixtral-8x7b", "h100-sxm-80gb:64", std::string(kMixtral) + ",dispatcher=flex,capacity_factor=1").args,
                     "--moe-flex-dispatcher-backend"), "hybridep");
}

// Grouped expert GEMMs (what Tessera costs; Megatron needs them to recompute moe_act).
TEST(MegatronMoeArgs, GroupedGemmForMoeModels) {
  EXPECT_TRUE(has_flag(exported("mixtral-8x7b", "h100-sxm-80gb:64", kMixtral).args, "--moe-grouped-gemm"));
  EXPECT_FALSE(has_flag(exported("llama3-8b", "h100-sxm-80gb:8", "tp=2,mb=1,gbs=8,seq=4096").args, "--moe-grouped-gemm"));
}

// Capacity factor comes with padding to capacity (Tessera's capacity semantics).
TEST(MegatronMoeArgs, CapacityFactorPadsToCapacity) {
  const auto a = exported("mixtral-8x7b", "h100-sxm-80gb:64", std::string(kMixtral) + ",capacity_factor=1.5").args;
  EXPECT_EQ(value_of(a, "--moe-expert-capacity-factor"), "1.5");
  EXPECT_TRUE(has_flag(a, "--moe-pad-expert-input-to-capacity"));
  const auto dropless = exported("mixtral-8x7b", "h100-sxm-80gb:64", kMixtral).args;
  EXPECT_FALSE(has_flag(dropless, "--moe-expert-capacity-factor"));
  EXPECT_FALSE(has_flag(dropless, "--moe-pad-expert-input-to-capacity"));
}

TEST(MegatronMoeArgs, ForcedBalance) {
  EXPECT_TRUE(has_flag(exported("mixtral-8x7b", "h100-sxm-80gb:64", std::string(kMixtral) + ",force_balance=1").args,
                       "--moe-router-force-load-balancing"));
}

TEST(MegatronMoeArgs, ExpertOverlapAndDelayedWgrad) {
  const auto a = exported("mixtral-8x7b", "h100-sxm-80gb:64",
                          "tp=2,pp=2,vpp=2,ep=8,mb=1,gbs=256,seq=4096,zero=1,overlap_ep=1,delay_wgrad=1").args;
  EXPECT_TRUE(has_flag(a, "--overlap-moe-expert-parallel-comm"));
  EXPECT_TRUE(has_flag(a, "--delay-wgrad-compute"));
}

// FP8: the format (hybrid: E4M3 forward, E5M2 gradients) and the recipe by name, since Megatron's
// default recipe is delayed; a flag-less import reads delayed.
TEST(MegatronMoeArgs, Fp8FormatAndRecipe) {
  const Exported e = exported("llama3-8b", "h100-sxm-80gb:8", "tp=2,mb=1,gbs=8,seq=4096,precision=fp8");
  EXPECT_EQ(value_of(e.args, "--fp8-format"), "hybrid");
  EXPECT_EQ(value_of(e.args, "--fp8-recipe"), "tensorwise");
  const PlanRequest back = plan_from_megatron_args({"--tensor-model-parallel-size", "2", "--global-batch-size", "8",
                                                    "--seq-length", "4096", "--fp8-format", "hybrid"}, e.model, e.cluster);
  EXPECT_EQ(back.plan.fp8_recipe, Fp8Recipe::delayed);
  EXPECT_FALSE(has_flag(exported("llama3-8b", "h100-sxm-80gb:8", "tp=2,mb=1,gbs=8,seq=4096").args, "--fp8-recipe"));
}

// --fp8-param-gather needs the distributed optimizer or FSDP (arguments.py validate_args).
TEST(MegatronMoeArgs, Fp8ParamGatherNeedsAShardedOptimizer) {
  EXPECT_TRUE(has_flag(exported("llama3-8b", "h100-sxm-80gb:8", "tp=2,mb=1,gbs=8,seq=4096,precision=fp8,fp8_param_gather=1,zero=1").args,
                       "--fp8-param-gather"));
  const ModelSpec m = builtin_model("llama3-8b");
  const Cluster c = load_cluster("h100-sxm-80gb:8");
  // validate_plan refuses the plan (plan.cpp), and the exporter refuses it on its own too.
  EXPECT_EQ(testing::thrown_field([&] { load_plan("tp=2,mb=1,gbs=8,seq=4096,precision=fp8,fp8_param_gather=1,zero=0", m, c); }),
            "fp8_param_gather");
  PlanRequest r = load_plan("tp=2,mb=1,gbs=8,seq=4096,precision=fp8,fp8_param_gather=1,zero=1", m, c);
  r.plan.zero = OptimizerSharding::none;
  EXPECT_EQ(testing::thrown_field([&] { megatron_args(m, r.plan, r.workload); }), "fp8_param_gather");
}

// Transformer Engine's delayed scaling cannot recompute moe_act or layernorm (transformer_config.py).
TEST(MegatronMoeArgs, DelayedScalingCannotRecomputeMoeActOrLayernorm) {
  const ModelSpec m = builtin_model("mixtral-8x7b");
  const Cluster c = load_cluster("h100-sxm-80gb:64");
  EXPECT_EQ(testing::thrown_field([&] {
              load_plan(std::string(kMixtral) + ",precision=fp8,fp8_recipe=delayed,recompute=selective,recompute_modules=moe_act", m, c);
            }),
            "fp8_recipe");
  PlanRequest r = load_plan(std::string(kMixtral) + ",precision=fp8,fp8_recipe=tensorwise,recompute=selective,"
                            "recompute_modules=moe_act", m, c);
  r.plan.fp8_recipe = Fp8Recipe::delayed;
  EXPECT_EQ(testing::thrown_field([&] { megatron_args(m, r.plan, r.workload); }), "fp8_recipe");
}

// Selective recompute names its modules as a list (nargs); the default (core_attn) is left to
// Megatron.
TEST(MegatronMoeArgs, RecomputeModulesList) {
  const auto a = exported("deepseek-v3", "h100-sxm-80gb:1024", "tp=2,pp=16,ep=64,etp=1,mb=1,gbs=8192,seq=4096,"
                          "recompute=selective,recompute_modules=mla_up_proj+layernorm+moe_act").args;
  EXPECT_EQ(value_of(a, "--recompute-granularity"), "selective");
  EXPECT_EQ(list_of(a, "--recompute-modules"), (std::vector<std::string>{"moe_act", "layernorm", "mla_up_proj"}));
  EXPECT_FALSE(has_flag(exported("llama3-8b", "h100-sxm-80gb:8", "tp=2,mb=1,gbs=8,seq=4096,recompute=selective").args,
                        "--recompute-modules"));
}

// ZeRO-3 is Megatron-FSDP: --use-torch-fsdp2 is rejected with pp > 1 or ep > 1.
TEST(MegatronMoeArgs, Zero3IsMegatronFsdp) {
  const auto a = exported("mixtral-8x7b", "h100-sxm-80gb:64", "tp=2,pp=2,ep=8,mb=1,gbs=256,seq=4096,zero=3").args;
  EXPECT_TRUE(has_flag(a, "--use-megatron-fsdp"));
  EXPECT_EQ(value_of(a, "--data-parallel-sharding-strategy"), "optim_grads_params");
  EXPECT_EQ(value_of(a, "--ckpt-format"), "fsdp_dtensor");
  EXPECT_FALSE(has_flag(a, "--use-torch-fsdp2"));
  EXPECT_FALSE(has_flag(a, "--use-distributed-optimizer"));
}

// Leading dense layers, or one MoE layer in every layer_freq (the last of each group, Llama 4's
// convention), as Megatron's explicit per-layer list: its integer form would put MoE first.
TEST(MegatronMoeArgs, MoeLayerFreqIsAnExplicitList) {
  const auto v3 = exported("deepseek-v3", "h100-sxm-80gb:1024", "tp=2,pp=16,ep=64,etp=1,mb=1,gbs=8192,seq=4096").args;
  std::string expected = "[0,0,0";
  for (int i = 3; i < 61; ++i) expected += ",1";
  EXPECT_EQ(value_of(v3, "--moe-layer-freq"), expected + "]");
  const ModelSpec maverick = builtin_model("llama4-maverick");
  ASSERT_EQ(maverick.moe.layer_freq, 2);
  const std::string pattern = value_of(exported("llama4-maverick", "h100-sxm-80gb:256",
                                                "tp=8,pp=4,ep=8,mb=1,gbs=256,seq=4096").args, "--moe-layer-freq");
  ASSERT_EQ(pattern.size(), static_cast<std::size_t>(2 * maverick.layers + 1));
  EXPECT_EQ(pattern.substr(0, 8), "[0,1,0,1");  // layer 0 dense, layer 1 MoE
  EXPECT_FALSE(has_flag(exported("mixtral-8x7b", "h100-sxm-80gb:64", kMixtral).args, "--moe-layer-freq"));
}

TEST(MegatronMoeArgs, MtpLayers) {
  ModelSpec m = builtin_model("deepseek-v3");
  m.mtp_layers = 1;
  const Cluster c = load_cluster("h100-sxm-80gb:1024");
  const PlanRequest r = load_plan("tp=2,pp=16,ep=64,etp=1,mb=1,gbs=8192,seq=4096", m, c);
  EXPECT_EQ(value_of(megatron_args(m, r.plan, r.workload), "--mtp-num-layers"), "1");
  m.mtp_layers = 0;
  EXPECT_FALSE(has_flag(megatron_args(m, r.plan, r.workload), "--mtp-num-layers"));
}

// DeepSeek-V3's router: sigmoid scores, 8 groups with top-4 groups per token, aux-loss-free bias.
TEST(MegatronMoeArgs, RouterScoringGroupsAndExpertBias) {
  const ModelSpec m = builtin_model("deepseek-v3");
  const auto a = exported("deepseek-v3", "h100-sxm-80gb:1024", "tp=2,pp=16,ep=64,etp=1,mb=1,gbs=8192,seq=4096").args;
  ASSERT_EQ(m.moe.scoring, RouterScoring::sigmoid);
  ASSERT_GT(m.moe.groups, 0);
  EXPECT_EQ(value_of(a, "--moe-router-score-function"), "sigmoid");
  {
    EXPECT_EQ(value_of(a, "--moe-router-num-groups"), std::to_string(m.moe.groups));
    EXPECT_EQ(value_of(a, "--moe-router-group-topk"), std::to_string(m.moe.topk_groups));
  }
  EXPECT_EQ(has_flag(a, "--moe-router-enable-expert-bias"), m.moe.router_bias && m.moe.scoring == RouterScoring::sigmoid);
  // A softmax router bias (GPT-OSS) is not Megatron's expert bias, which needs sigmoid scores.
  ModelSpec softmax = m;
  softmax.moe.scoring = RouterScoring::softmax;
  softmax.moe.router_bias = true;
  const PlanRequest r = load_plan("tp=2,pp=16,ep=64,etp=1,mb=1,gbs=8192,seq=4096", m, load_cluster("h100-sxm-80gb:1024"));
  EXPECT_FALSE(has_flag(megatron_args(softmax, r.plan, r.workload), "--moe-router-enable-expert-bias"));
  EXPECT_FALSE(has_flag(megatron_args(softmax, r.plan, r.workload), "--moe-router-score-function"));
}

// Megatron: "Please use --moe-router-pre-softmax when topk is 1" (softmax scores).
TEST(MegatronMoeArgs, TopOneSoftmaxRoutesPreSoftmax) {
  ModelSpec m = builtin_model("mixtral-8x7b");
  const Cluster c = load_cluster("h100-sxm-80gb:64");
  const PlanRequest r = load_plan(kMixtral, m, c);
  EXPECT_FALSE(has_flag(megatron_args(m, r.plan, r.workload), "--moe-router-pre-softmax"));
  m.moe.top_k = 1;
  EXPECT_TRUE(has_flag(megatron_args(m, r.plan, r.workload), "--moe-router-pre-softmax"));
}

TEST(MegatronMoeArgs, QkLayernorm) {
  EXPECT_EQ(has_flag(exported("qwen3-30b-a3b", "h100-sxm-80gb:16", "tp=2,ep=8,mb=1,gbs=64,seq=4096").args, "--qk-layernorm"),
            builtin_model("qwen3-30b-a3b").qk_norm);
}

}  // namespace
}  // namespace tessera
