// The --plan shorthand and plan JSON: documented defaults (dp from the GPU count, sp on when
// tp > 1, seq = the model's context, ...), lossless round trips, and errors that name the key.
#include "formats/plan_text.h"

#include <cstdint>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/error.h"
#include "formats/plan_constraints_text.h"

namespace tessera {
namespace {

using i64 = std::int64_t;

using testing::thrown_field;

const ModelSpec& gpt3() {
  static const ModelSpec m = builtin_model("gpt3-175b");
  return m;
}
const Cluster& a100_1024() {
  static const Cluster c = make_cluster(find_gpu("a100-sxm-80gb"), 1024);
  return c;
}
const Cluster& h100_512() {
  static const Cluster c = make_cluster(find_gpu("h100-sxm-80gb"), 512);
  return c;
}

void expect_same_plan(const Plan& a, const Plan& b) {
  EXPECT_EQ(a.tp, b.tp);
  EXPECT_EQ(a.pp, b.pp);
  EXPECT_EQ(a.dp, b.dp);
  EXPECT_EQ(a.cp, b.cp);
  EXPECT_EQ(a.ep, b.ep);
  EXPECT_EQ(a.vpp, b.vpp);
  EXPECT_EQ(a.micro_batch, b.micro_batch);
  EXPECT_EQ(a.sequence_parallel, b.sequence_parallel);
  EXPECT_EQ(a.recompute, b.recompute);
  EXPECT_EQ(a.zero, b.zero);
  EXPECT_EQ(a.precision, b.precision);
  EXPECT_EQ(a.overlap_grad_reduce, b.overlap_grad_reduce);
  EXPECT_EQ(a.overlap_param_gather, b.overlap_param_gather);
  EXPECT_EQ(a.overlap_tp_comm, b.overlap_tp_comm);
  EXPECT_EQ(a.overlap_p2p, b.overlap_p2p);
  EXPECT_EQ(a.flash_attention, b.flash_attention);
  EXPECT_EQ(a.first_stage_layers, b.first_stage_layers);
  EXPECT_EQ(a.last_stage_layers, b.last_stage_layers);
}

TEST(PlanText, ShorthandWithDefaults) {
  const PlanRequest r = load_plan("tp=8,pp=16,gbs=1536", gpt3(), a100_1024());
  const Plan& p = r.plan;
  EXPECT_EQ(p.tp, 8);
  EXPECT_EQ(p.pp, 16);
  EXPECT_EQ(p.dp, 1024 / (8 * 16));  // derived from the GPU count
  EXPECT_EQ(p.cp, 1);
  EXPECT_EQ(p.ep, 1);
  EXPECT_EQ(p.vpp, 1);
  EXPECT_EQ(p.micro_batch, 1);
  EXPECT_TRUE(p.sequence_parallel);  // on because tp > 1
  EXPECT_EQ(p.recompute, Recompute::none);
  EXPECT_EQ(p.zero, OptimizerSharding::none);
  EXPECT_EQ(p.precision, Precision::bf16);
  EXPECT_TRUE(p.overlap_grad_reduce);
  EXPECT_TRUE(p.overlap_param_gather);
  EXPECT_FALSE(p.overlap_tp_comm);
  EXPECT_TRUE(p.overlap_p2p);
  EXPECT_TRUE(p.flash_attention);
  EXPECT_EQ(p.first_stage_layers, 0);
  EXPECT_EQ(p.last_stage_layers, 0);
  EXPECT_EQ(r.workload.global_batch, 1536);
  EXPECT_EQ(r.workload.seq_len, gpt3().max_context);  // seq defaults to the model's context
  EXPECT_EQ(p.gpus(), a100_1024().gpus());
}

TEST(PlanText, SequenceParallelDefaultFollowsTp) {
  EXPECT_FALSE(load_plan("pp=8,gbs=1024", gpt3(), a100_1024()).plan.sequence_parallel);
  EXPECT_FALSE(load_plan("tp=8,pp=8,gbs=1024,sp=0", gpt3(), a100_1024()).plan.sequence_parallel);
  EXPECT_TRUE(load_plan("tp=2,pp=8,gbs=1024", gpt3(), a100_1024()).plan.sequence_parallel);
}

TEST(PlanText, AllKeysParse) {
  const PlanRequest r = load_plan(
      "tp=4,pp=8,dp=16,cp=2,vpp=3,mb=2,gbs=1024,seq=4096,recompute=selective,sp=1,zero=zero1,"
      "precision=fp8,overlap_grad=0,overlap_param=false,overlap_tp=on,overlap_p2p=no,flash=1",
      gpt3(), make_cluster(find_gpu("h100-sxm-80gb"), 1024));
  const Plan& p = r.plan;
  EXPECT_EQ(p.tp, 4);
  EXPECT_EQ(p.pp, 8);
  EXPECT_EQ(p.dp, 16);
  EXPECT_EQ(p.cp, 2);
  EXPECT_EQ(p.vpp, 3);
  EXPECT_EQ(p.micro_batch, 2);
  EXPECT_EQ(r.workload.global_batch, 1024);
  EXPECT_EQ(r.workload.seq_len, 4096);
  EXPECT_EQ(p.recompute, Recompute::selective);
  EXPECT_TRUE(p.sequence_parallel);
  EXPECT_EQ(p.zero, OptimizerSharding::zero1);
  EXPECT_EQ(p.precision, Precision::fp8);
  EXPECT_FALSE(p.overlap_grad_reduce);
  EXPECT_FALSE(p.overlap_param_gather);
  EXPECT_TRUE(p.overlap_tp_comm);
  EXPECT_FALSE(p.overlap_p2p);
  EXPECT_TRUE(p.flash_attention);
  EXPECT_FALSE(load_plan("tp=4,pp=8,gbs=1024,flash=0", gpt3(), a100_1024()).plan.flash_attention);
}

// Megatron-Core's context parallelism runs in Transformer Engine's fused attention only, and cuts a
// causal sequence into 2*cp chunks.
TEST(PlanText, ContextParallelNeedsFlashAttentionAndTwoCpChunks) {
  const Cluster c = make_cluster(find_gpu("h100-sxm-80gb"), 1024);
  EXPECT_NO_THROW(load_plan("tp=4,pp=8,cp=2,gbs=1024,seq=4096", gpt3(), c));
  EXPECT_EQ(thrown_field([&] { load_plan("tp=4,pp=8,cp=2,gbs=1024,seq=4096,flash=0", gpt3(), c); }), "cp");
  EXPECT_EQ(thrown_field([&] { load_plan("tp=4,pp=8,cp=2,gbs=1024,seq=4098", gpt3(), c); }), "cp");
}

Plan rich_plan(Workload& w) {
  Plan p;
  p.tp = 4;
  p.pp = 8;
  p.dp = 8;
  p.cp = 2;
  p.vpp = 2;
  p.micro_batch = 2;
  p.sequence_parallel = true;
  p.recompute = Recompute::full;
  p.zero = OptimizerSharding::zero3;
  p.precision = Precision::fp8;
  w.global_batch = 256;
  w.seq_len = 4096;
  return p;
}

TEST(PlanText, ShorthandRoundTrip) {
  Workload w;
  const Plan p = rich_plan(w);
  validate_plan(p, gpt3(), h100_512(), w);
  const PlanRequest back = load_plan(plan_to_shorthand(p, w), gpt3(), h100_512());
  expect_same_plan(back.plan, p);
  EXPECT_EQ(back.workload.global_batch, w.global_batch);
  EXPECT_EQ(back.workload.seq_len, w.seq_len);
}

TEST(PlanText, ShorthandRoundTripUnevenSplit) {
  Workload w;
  w.global_batch = 512;
  w.seq_len = 2048;
  Plan p;
  p.tp = 8;
  p.pp = 8;
  p.dp = 8;
  p.sequence_parallel = true;
  p.first_stage_layers = 6;
  p.last_stage_layers = 6;  // 84 over 6 middle stages = 14 each
  validate_plan(p, gpt3(), h100_512(), w);
  expect_same_plan(load_plan(plan_to_shorthand(p, w), gpt3(), h100_512()).plan, p);
}

// Every Plan field the shorthand can set must survive plan_to_shorthand -> load_plan, including
// the overlap switches (the shorthand is what reports print as the plan to rerun).
TEST(PlanText, ShorthandRoundTripKeepsOverlapSwitches) {
  Workload w;
  Plan p = rich_plan(w);
  p.overlap_grad_reduce = false;
  p.overlap_param_gather = false;
  p.overlap_tp_comm = true;
  p.overlap_p2p = false;
  p.cp = 1;  // context parallelism needs flash attention
  p.dp = 16;
  p.flash_attention = false;
  validate_plan(p, gpt3(), h100_512(), w);
  const std::string text = plan_to_shorthand(p, w);
  expect_same_plan(load_plan(text, gpt3(), h100_512()).plan, p);
}

TEST(PlanText, JsonRoundTrip) {
  Workload w;
  Plan p = rich_plan(w);
  p.overlap_grad_reduce = false;
  p.overlap_tp_comm = true;
  const PlanRequest back = plan_from_json(plan_to_json(p, w), gpt3(), h100_512());
  expect_same_plan(back.plan, p);
  EXPECT_EQ(back.workload.global_batch, w.global_batch);
  EXPECT_EQ(back.workload.seq_len, w.seq_len);
}

TEST(PlanText, JsonFileAndNestedPlanFile) {
  Workload w;
  const Plan p = rich_plan(w);
  const std::string flat = ::testing::TempDir() + "tessera_plan_flat.json";
  const std::string nested = ::testing::TempDir() + "tessera_plan_nested.json";
  std::ofstream(flat) << plan_to_json(p, w).dump();
  std::ofstream(nested) << nlohmann::json{{"plan", plan_to_json(p, w)}, {"estimate", {{"mfu", 0.4}}}}.dump();
  expect_same_plan(load_plan(flat, gpt3(), h100_512()).plan, p);
  expect_same_plan(load_plan(nested, gpt3(), h100_512()).plan, p);
}

TEST(PlanText, ErrorsNameTheKey) {
  const ModelSpec& m = gpt3();
  const Cluster& c = a100_1024();
  auto field = [&](const std::string& text) { return thrown_field([&] { load_plan(text, m, c); }); };
  EXPECT_EQ(field("tp=x,gbs=1024"), "tp");
  EXPECT_EQ(field("tp=8,gbs=10.5"), "gbs");
  EXPECT_EQ(field("tp=8"), "gbs");  // gbs is required
  EXPECT_EQ(field("tpp=8,gbs=1024"), "plan.tpp");
  EXPECT_EQ(field("tp=8,tp=4,gbs=1024"), "plan.tp");
  EXPECT_EQ(field("tp8,gbs=1024"), "plan");
  EXPECT_EQ(field("=8,gbs=1024"), "plan");
  EXPECT_EQ(field("recompute=partial,gbs=1024"), "recompute");
  EXPECT_EQ(field("sp=maybe,tp=8,gbs=1024"), "sp");
  EXPECT_EQ(field("zero=4,gbs=1024"), "zero");
  EXPECT_EQ(field("precision=int4,gbs=1024"), "precision");
  EXPECT_EQ(field("tp=0,gbs=1024"), "tp");
  EXPECT_EQ(field("tp=8,pp=8,dp=8,gbs=1024"), "dp");          // 512 != 1024 GPUs
  EXPECT_EQ(field("tp=8,pp=16,gbs=1004"), "gbs");             // 1004 % 8 != 0
  EXPECT_EQ(field("tp=8,pp=8,vpp=2,gbs=1040"), "mb");         // 65 micro-batches, pp = 8
  EXPECT_EQ(field("tp=1,pp=16,sp=1,gbs=1024"), "sp");
  // Heads: 96 is not divisible by 5 (40 GPUs so that the product works).
  const Cluster c40 = make_cluster(find_gpu("a100-sxm-80gb"), 40);
  EXPECT_EQ(thrown_field([&] { load_plan("tp=5,gbs=40", m, c40); }), "tp");
}

TEST(PlanText, JsonErrorsNameTheKey) {
  EXPECT_EQ(thrown_field([] { plan_from_json({{"tp", 8}, {"gbs", 1.5}}, gpt3(), a100_1024()); }), "plan.gbs");
  EXPECT_EQ(thrown_field([] { plan_from_json({{"tq", 8}, {"gbs", 1024}}, gpt3(), a100_1024()); }), "plan.tq");
  EXPECT_EQ(thrown_field([] { plan_from_json(nlohmann::json::array(), gpt3(), a100_1024()); }), "plan");
}

// Issue 13, D11 and D9: a boolean is not an integer, an integer beyond int64 is refused (not
// wrapped), and a key given twice is an error in the shorthand and in JSON alike.
TEST(PlanText, BooleanAndHugeIntegersAreRefusedByName) {
  const auto json_field = [](const std::string& text) {
    return thrown_field([&] { (void)plan_from_json(nlohmann::json::parse(text), gpt3(), a100_1024()); });
  };
  EXPECT_EQ(json_field(R"({"gbs": 8, "vpp": true})"), "vpp");
  EXPECT_EQ(json_field(R"({"gbs": false})"), "gbs");
  EXPECT_EQ(json_field(R"({"gbs": 8, "tp": 9223372036854775808})"), "tp");
  // Switches still take booleans.
  const PlanRequest r = plan_from_json(nlohmann::json::parse(R"({"gbs": 1536, "tp": 8, "pp": 8, "sp": false})"),
                                       gpt3(), a100_1024());
  EXPECT_FALSE(r.plan.sequence_parallel);
  EXPECT_EQ(thrown_field([] { (void)load_plan("tp=99999999999999999999,gbs=8", gpt3(), a100_1024()); }), "tp");
  EXPECT_EQ(thrown_field([] { (void)load_plan("tp=8,pp=8,gbs=1536,tp=4", gpt3(), a100_1024()); }), "plan.tp");
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// Spaces around keys and values are not part of them (issue 32: "tp=1, mb=1" was refused), in
// --plan and --fix alike; a key without '=' and a key given twice still name themselves.
TEST(KeyValueItems, SpacesAroundKeysAndValuesAreIgnored) {
  const auto items = key_value_items(" tp=1, mb = 2 ,,recompute=full ", "plan", "key=value");
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0], (std::pair<std::string, std::string>{"tp", "1"}));
  EXPECT_EQ(items[1], (std::pair<std::string, std::string>{"mb", "2"}));
  EXPECT_EQ(items[2], (std::pair<std::string, std::string>{"recompute", "full"}));
  EXPECT_EQ(*parse_constraints("tp=8, pp = 4").pp, 4);
  EXPECT_EQ(testing::thrown_field([] { (void)key_value_items("tp=1, tp =2", "fix", "x"); }), "fix.tp");
  EXPECT_EQ(testing::thrown_field([] { (void)key_value_items("tp=1, = 2", "plan", "x"); }), "plan");
  EXPECT_EQ(testing::thrown_field([] { (void)key_value_items("tp", "plan", "x"); }), "plan");
}

}  // namespace
}  // namespace tessera
