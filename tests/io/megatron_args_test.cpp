// Megatron-LM arguments: every plan field Megatron can express survives plan -> args -> plan.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.h"
#include "io/gpu_catalog.h"
#include "io/megatron_args.h"
#include "io/model_source.h"
#include "io/plan_text.h"

namespace tessera {
namespace {

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
  expect_round_trip("bloom-176b", "a100-sxm-80gb:384", "tp=4,pp=12,mb=2,gbs=2048,seq=2048,recompute=full,sp=0,overlap_grad=0,overlap_p2p=0,flash=0");
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
  // 126 layers over 16 x 4 virtual stages: Megatron's uneven split, first and last take fewer.
  EXPECT_EQ(value_of(a, "--num-virtual-stages-per-pipeline-rank"), "4");
  const int first = std::stoi(value_of(a, "--decoder-first-pipeline-num-layers"));
  const int last = std::stoi(value_of(a, "--decoder-last-pipeline-num-layers"));
  EXPECT_EQ(first + last + 62 * 2, 126);
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

TEST(TorchtitanToml, ShardsWithFsdpAndNamesTheSchedule) {
  const ModelSpec model = builtin_model("llama3-70b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:256");
  const PlanRequest r = load_plan("tp=8,pp=4,vpp=2,mb=1,gbs=512,seq=8192,recompute=full,zero=3", model, cluster);
  const std::string toml = torchtitan_toml(model, r.plan, r.workload);
  EXPECT_NE(toml.find("data_parallel_shard_degree = 8"), std::string::npos) << toml;
  EXPECT_NE(toml.find("data_parallel_replicate_degree = 1"), std::string::npos);
  EXPECT_NE(toml.find("tensor_parallel_degree = 8"), std::string::npos);
  EXPECT_NE(toml.find("pipeline_parallel_degree = 4"), std::string::npos);
  EXPECT_NE(toml.find("\"Interleaved1F1B\""), std::string::npos);
  EXPECT_NE(toml.find("mode = \"full\""), std::string::npos);
  EXPECT_NE(toml.find("local_batch_size = 64"), std::string::npos);
}

}  // namespace
}  // namespace tessera
