// The plan of a log: the dump's tp/pp/dp/mb/gbs read back, the model shape, contradictions named.
#include <gtest/gtest.h>

#include "common/log_fixture.h"

#include <fstream>
#include <sstream>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "common/thrown_field.h"
#include "core/error.h"
#include "formats/log_plan.h"
#include "formats/plan_text.h"

namespace tessera {
namespace {

using testing::log_fixture;

using testing::thrown_field;


TEST(LogPlan, DumpGivesThePlanOfTheFixture) {
  const TrainingLog log = parse_training_log(log_fixture("megatron_mixtral_h100.log"), "m");
  const ModelSpec model = builtin_model("mixtral-8x7b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:16");
  const PlanRequest r = plan_from_megatron_log(log, model, cluster);
  EXPECT_EQ(r.plan.tp, 4);
  EXPECT_EQ(r.plan.pp, 1);
  EXPECT_EQ(r.plan.dp, 4);
  EXPECT_EQ(r.plan.micro_batch, 1);
  EXPECT_EQ(r.workload.global_batch, 128);
  EXPECT_EQ(r.workload.seq_len, 4096);
  EXPECT_TRUE(r.plan.sequence_parallel);
  EXPECT_EQ(r.plan.zero, OptimizerSharding::zero1);
  EXPECT_FALSE(r.plan.overlap_p2p);  // overlap_p2p_comm False in the dump
  EXPECT_EQ(log_world_size(log), 16);
  EXPECT_NO_THROW(check_log_matches_plan(log, r.plan, r.workload));
}

TEST(LogPlan, ModelShapeFromTheDump) {
  const TrainingLog log = parse_training_log(log_fixture("megatron_mixtral_h100.log"), "m");
  const ModelSpec m = model_from_megatron_log(log, "from-log");
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.heads, 32);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.vocab, 32256);
  EXPECT_EQ(m.moe.experts, 8);
  EXPECT_EQ(m.moe.top_k, 2);
  EXPECT_EQ(m.mlp, MlpType::swiglu);
  EXPECT_FALSE(m.tied_embeddings);
  std::string text = log_fixture("megatron_mixtral_h100.log");
  text.replace(text.find("  num_layers "), 13, "  num_layerz ");
  const TrainingLog missing = parse_training_log(text, "m");
  EXPECT_EQ(thrown_field([&] { model_from_megatron_log(missing, "x"); }), "log:m:6.num_layers");
}

TEST(LogPlan, ContradictionNamesTheDumpLine) {
  const TrainingLog log = parse_training_log(log_fixture("megatron_mixtral_h100.log"), "m");
  const ModelSpec model = builtin_model("mixtral-8x7b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:16");
  const PlanRequest given = load_plan("tp=2,pp=1,mb=1,gbs=128,seq=4096", model, cluster);
  const std::size_t line = log.argument_lines.at("tensor_model_parallel_size");
  try {
    check_log_matches_plan(log, given.plan, given.workload);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "log:m:" + std::to_string(line) + ".tensor_model_parallel_size");
    EXPECT_NE(std::string(e.what()).find("log says 4, --plan says tp 2"), std::string::npos);
  }
  const PlanRequest other_batch = load_plan("tp=4,pp=1,mb=1,gbs=256,seq=4096", model, cluster);
  EXPECT_EQ(thrown_field([&] { check_log_matches_plan(log, other_batch.plan, other_batch.workload); }),
            "log:m:" + std::to_string(log.argument_lines.at("global_batch_size")) + ".global_batch_size");
}

TEST(LogPlan, TorchtitanMeshContradictionIsNamed) {
  const TrainingLog log = parse_training_log(log_fixture("torchtitan_rank0.log"), "t");
  const ModelSpec model = builtin_model("llama3-8b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:2");
  const PlanRequest ok = load_plan("tp=1,pp=1,mb=4,gbs=8,seq=2048,zero=3", model, cluster);
  EXPECT_NO_THROW(check_log_matches_plan(log, ok.plan, ok.workload));
  const PlanRequest tp2 = load_plan("tp=2,pp=1,mb=4,gbs=8,seq=2048", model, cluster);
  EXPECT_EQ(thrown_field([&] { check_log_matches_plan(log, tp2.plan, tp2.workload); }), "log:t:1.tp");
}

TEST(LogPlan, TorchtitanJobGivesItsPlan) {
  TorchtitanJob job;
  job.tp = 2;
  job.dp_shard = -1;
  job.max_context = 8192;
  job.tokens_per_microbatch = 8192;
  job.tokens_per_step = 32 * 8192;
  job.activation_checkpoint = "FullAC";
  const ModelSpec model = builtin_model("llama3-8b");
  const PlanRequest r = plan_from_torchtitan_job(job, model, load_cluster("h100-sxm-80gb:16"));
  EXPECT_EQ(r.plan.dp, 8);  // 16 GPUs / tp 2
  EXPECT_EQ(r.plan.micro_batch, 1);
  EXPECT_EQ(r.workload.global_batch, 32);
  EXPECT_EQ(r.plan.recompute, Recompute::full);
  EXPECT_EQ(r.plan.zero, OptimizerSharding::zero3);
  EXPECT_EQ(r.plan.framework, TrainingFramework::torchtitan);
}

}  // namespace
}  // namespace tessera
