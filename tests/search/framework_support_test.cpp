#include "search/framework_support.h"

#include <string>

#include <gtest/gtest.h>

#include "catalog/model_source.h"

namespace tessera {
namespace {

// A plan torchtitan runs for a dense model: FSDP2 over dp, TP 8.
Plan fsdp_tp8() {
  Plan p;
  p.tp = 8;
  p.dp = 8;
  p.zero = OptimizerSharding::zero3;
  p.sequence_parallel = true;
  return p;
}

std::string reason(const ModelSpec& m, const Plan& p) {
  const char* r = torchtitan_unsupported_reason(m, p);
  return r == nullptr ? "" : r;
}

TEST(TorchtitanFlavor, ZooModelsMapToTheFlavorOfTheSameShape) {
  struct Expect {
    const char* model;
    const char* module;
    const char* flavor;
  };
  for (const Expect e : {Expect{"llama3-8b", "llama3", "8B"}, Expect{"llama3-70b", "llama3", "70B"},
                         Expect{"llama3.1-405b", "llama3", "405B"}, Expect{"qwen3-30b-a3b", "qwen3", "30B-A3B"},
                         Expect{"qwen3-235b-a22b", "qwen3", "235B-A22B"}, Expect{"deepseek-v3", "deepseek_v3", "671B"},
                         Expect{"gpt-oss-120b", "gpt_oss", "120b"}}) {
    const ModelSpec m = builtin_model(e.model);
    const TorchtitanFlavor* f = torchtitan_flavor(m);
    ASSERT_NE(f, nullptr) << e.model;
    EXPECT_STREQ(f->module, e.module);
    EXPECT_STREQ(f->flavor, e.flavor);
    EXPECT_EQ(f->layers, m.layers);
  }
}

TEST(TorchtitanFlavor, ModelsTorchtitanDoesNotShipAreRefusedWithTheReason) {
  for (const char* name : {"mixtral-8x7b", "llama4-maverick", "gpt3-175b", "qwen2.5-72b", "llama2-70b", "grok-1"}) {
    const ModelSpec m = builtin_model(name);
    EXPECT_EQ(torchtitan_flavor(m), nullptr) << name;
    EXPECT_NE(reason(m, fsdp_tp8()).find("ships no model"), std::string::npos) << name;
  }
  // Kimi-K2's text tower is torchtitan's Kimi-K2.5, which it ships only with a vision tower.
  EXPECT_NE(reason(builtin_model("kimi-k2"), fsdp_tp8()).find("vision-language"), std::string::npos);
  // A changed shape is no longer the flavor.
  ModelSpec wider = builtin_model("llama3-8b");
  wider.layers += 1;
  EXPECT_EQ(torchtitan_flavor(wider), nullptr);
}

TEST(TorchtitanCanRun, FsdpAndDdpWithTpPpRun) {
  const ModelSpec m = builtin_model("llama3-70b");
  Plan p = fsdp_tp8();
  EXPECT_TRUE(torchtitan_can_run(m, p)) << reason(m, p);
  p.pp = 4;
  p.vpp = 2;
  p.dp = 2;
  EXPECT_TRUE(torchtitan_can_run(m, p)) << reason(m, p);
  p.zero = OptimizerSharding::none;  // DDP (dp_replicate) with tp and pp: current torchtitan accepts it
  EXPECT_TRUE(torchtitan_can_run(m, p)) << reason(m, p);
  p.recompute = Recompute::selective;
  EXPECT_TRUE(torchtitan_can_run(m, p));
  p.precision = Precision::fp8;
  p.fp8_recipe = Fp8Recipe::tensorwise;  // exported as rowwise
  EXPECT_TRUE(torchtitan_can_run(m, p));
}

// Every plan-level reason, each shown firing on a plan that runs without it.
TEST(TorchtitanCanRun, EachPlanRuleFires) {
  const ModelSpec dense = builtin_model("llama3-70b");
  const ModelSpec moe = builtin_model("qwen3-30b-a3b");
  const ModelSpec mtp = builtin_model("deepseek-v3");
  const ModelSpec swa = builtin_model("gpt-oss-120b");
  ModelSpec tied = dense;
  tied.tied_embeddings = true;
  Plan moe_ep = fsdp_tp8();
  moe_ep.tp = 1;
  moe_ep.dp = 64;
  moe_ep.ep = 8;
  moe_ep.etp = 1;
  ASSERT_TRUE(torchtitan_can_run(moe, moe_ep)) << reason(moe, moe_ep);
  ASSERT_TRUE(torchtitan_can_run(mtp, moe_ep)) << reason(mtp, moe_ep);
  ASSERT_TRUE(torchtitan_can_run(swa, moe_ep)) << reason(swa, moe_ep);

  struct Case {
    const char* what;
    const ModelSpec* model;
    Plan plan;
    const char* says;
  };
  auto with = [](Plan p, auto change) {
    change(p);
    return p;
  };
  const Plan base = fsdp_tp8();
  const Case cases[] = {
      {"zero1", &dense, with(base, [](Plan& p) { p.zero = OptimizerSharding::zero1; }), "ZeRO-1"},
      {"zero2", &dense, with(base, [](Plan& p) { p.zero = OptimizerSharding::zero2; }), "ZeRO-2"},
      {"ddp with cp", &dense, with(base, [](Plan& p) { p.zero = OptimizerSharding::none; p.cp = 2; p.dp = 4; }), "cp ranks"},
      {"ddp with ep", &moe, with(moe_ep, [](Plan& p) { p.zero = OptimizerSharding::none; }), "efsdp"},
      {"etp with ep", &moe, with(moe_ep, [](Plan& p) { p.tp = 2; p.dp = 32; p.etp = 2; }), "expert tensor"},
      {"etp != tp without ep", &moe, with(base, [](Plan& p) { p.etp = 1; }), "etp must equal tp"},
      {"ep not dividing", &moe, with(moe_ep, [](Plan& p) { p.dp = 4; p.ep = 8; }), "must divide"},
      {"allgather dispatcher", &moe, with(moe_ep, [](Plan& p) { p.dispatcher = MoeDispatcher::allgather; }), "all-to-all"},
      {"capacity factor", &moe, with(moe_ep, [](Plan& p) { p.capacity_factor = 1.25; }), "dropless"},
      {"ep overlap", &moe, with(moe_ep, [](Plan& p) { p.overlap_ep = true; p.delay_wgrad = true; }), "overlap"},
      {"partial full recompute", &dense, with(base, [](Plan& p) { p.recompute = Recompute::full; p.recompute_layers = 2; }), "every transformer block"},
      {"recompute modules", &dense, with(base, [](Plan& p) { p.recompute = Recompute::selective; p.recompute_modules = kRecomputeMlp; }), "per-op policy"},
      {"delayed fp8", &dense, with(base, [](Plan& p) { p.precision = Precision::fp8; p.fp8_recipe = Fp8Recipe::delayed; }), "delayed"},
      {"blockwise fp8", &dense, with(base, [](Plan& p) { p.precision = Precision::fp8; p.fp8_recipe = Fp8Recipe::blockwise; }), "block-wise"},
      {"fp8 param gather", &dense, with(base, [](Plan& p) { p.precision = Precision::fp8; p.fp8_param_gather = true; }), "all-gather parameters"},
      {"mtp with pp", &mtp, with(moe_ep, [](Plan& p) { p.pp = 2; p.dp = 32; }), "multi-token prediction"},
      {"mtp with cp", &mtp, with(moe_ep, [](Plan& p) { p.cp = 2; p.dp = 32; }), "multi-token prediction"},
      {"tied with pp", &tied, with(base, [](Plan& p) { p.pp = 2; p.dp = 4; }), "weight tying"},
      {"cp with sliding window", &swa, with(moe_ep, [](Plan& p) { p.cp = 2; p.dp = 32; }), "sliding-window"},
      {"unfused attention", &dense, with(base, [](Plan& p) { p.flash_attention = false; }), "unfused"},
  };
  for (const Case& c : cases) {
    const std::string r = reason(*c.model, c.plan);
    EXPECT_NE(r.find(c.says), std::string::npos) << c.what << ": got \"" << r << "\"";
    EXPECT_FALSE(torchtitan_can_run(*c.model, c.plan)) << c.what;
  }
}

}  // namespace
}  // namespace tessera
