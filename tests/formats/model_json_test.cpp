// Model JSON (src/formats/model_json.cpp): the issue-11 keys read, written and read back, and their
// errors. (It sits in tests/model/ for now; its home is tests/formats/model_json_test.cpp.)
#include "formats/model_json.h"

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "catalog/model_source.h"
#include "common/thrown_field.h"
#include "model/parameter_count.h"

namespace tessera {
namespace {

using nlohmann::json;
using tessera::testing::thrown_field;

json deepseek_like() {
  return json::parse(R"({
    "name": "ds", "layers": 8, "hidden": 256, "ffn_hidden": 1024, "heads": 4, "head_dim": 64,
    "vocab": 1000, "max_context": 4096, "mlp": "swiglu", "attention": "mla", "norm": "rmsnorm",
    "qk_norm": true, "mtp_layers": 2,
    "moe": {"experts": 16, "top_k": 2, "expert_ffn_hidden": 128, "shared_experts": 1,
            "dense_layers": 1, "layer_freq": 3, "router_bias": true, "scoring": "sigmoid",
            "groups": 4, "topk_groups": 2},
    "mla": {"q_lora_rank": 96, "kv_lora_rank": 64, "qk_nope_head_dim": 32,
            "qk_rope_head_dim": 16, "v_head_dim": 32}})");
}

TEST(ModelJson, ReadsTheNewKeys) {
  const ModelSpec m = model_from_json(deepseek_like());
  EXPECT_TRUE(m.qk_norm);
  EXPECT_EQ(m.mtp_layers, 2);
  EXPECT_EQ(m.moe.layer_freq, 3);
  EXPECT_EQ(m.moe.scoring, RouterScoring::sigmoid);
  EXPECT_EQ(m.moe.groups, 4);
  EXPECT_EQ(m.moe.topk_groups, 2);
  EXPECT_EQ(m.moe_layers(), 2);  // layers 3 and 6 of 8, after one dense layer
}

TEST(ModelJson, DefaultsAreTheOldBehaviour) {
  json j = deepseek_like();
  for (const char* key : {"qk_norm", "mtp_layers"}) j.erase(key);
  for (const char* key : {"layer_freq", "scoring", "groups", "topk_groups"}) j["moe"].erase(key);
  const ModelSpec m = model_from_json(j);
  EXPECT_FALSE(m.qk_norm);
  EXPECT_EQ(m.mtp_layers, 0);
  EXPECT_EQ(m.moe.layer_freq, 1);
  EXPECT_EQ(m.moe.scoring, RouterScoring::softmax);
  EXPECT_EQ(m.moe.groups, 0);
  EXPECT_EQ(m.moe.topk_groups, 0);
}

TEST(ModelJson, RoundTripKeepsEveryNewField) {
  const ModelSpec m = model_from_json(deepseek_like());
  const json written = model_to_json(m);
  EXPECT_EQ(written.at("qk_norm"), true);
  EXPECT_EQ(written.at("mtp_layers"), 2);
  EXPECT_EQ(written.at("moe").at("layer_freq"), 3);
  EXPECT_EQ(written.at("moe").at("scoring"), "sigmoid");
  EXPECT_EQ(written.at("moe").at("groups"), 4);
  EXPECT_EQ(written.at("moe").at("topk_groups"), 2);
  const ModelSpec back = model_from_json(written);
  EXPECT_EQ(model_to_json(back), written);
  EXPECT_EQ(count_parameters(back).total(), count_parameters(m).total());
}

// Every zoo model survives write-then-read with the same counts.
TEST(ModelJson, ZooRoundTrips) {
  for (const auto& name : builtin_model_names()) {
    SCOPED_TRACE(name);
    const ModelSpec m = builtin_model(name);
    const ModelSpec back = model_from_json(model_to_json(m));
    EXPECT_EQ(model_to_json(back), model_to_json(m));
    EXPECT_EQ(count_parameters(back).total(), count_parameters(m).total());
  }
}

TEST(ModelJson, BadNewKeysNameTheField) {
  json j = deepseek_like();
  j["moe"]["layer_frequency"] = 2;  // a typo is an unknown key, not ignored
  EXPECT_EQ(thrown_field([&] { model_from_json(j); }), "model.moe.layer_frequency");
  j = deepseek_like();
  j["mtp"] = 1;
  EXPECT_EQ(thrown_field([&] { model_from_json(j); }), "model.mtp");
  j = deepseek_like();
  j["moe"]["scoring"] = "sparsemax";
  EXPECT_EQ(thrown_field([&] { model_from_json(j); }), "moe.scoring");
  j = deepseek_like();
  j["moe"]["layer_freq"] = 0;
  EXPECT_EQ(thrown_field([&] { model_from_json(j); }), "model.moe.layer_freq");
  j = deepseek_like();
  j["moe"]["groups"] = 3;
  EXPECT_EQ(thrown_field([&] { model_from_json(j); }), "model.moe.groups");
  j = deepseek_like();
  j["mtp_layers"] = "one";
  EXPECT_EQ(thrown_field([&] { model_from_json(j); }), "model.mtp_layers");
  j = deepseek_like();
  j["qk_norm"] = 1;
  EXPECT_EQ(thrown_field([&] { model_from_json(j); }), "model.qk_norm");
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// ---- issue 12: RoPE, norm epsilon, GPT-OSS's GLU, soft-capping, load balancing ----

TEST(ModelJson, RopeNormAndGluKeysRoundTrip) {
  json j = deepseek_like();
  j["rope_base"] = 500000;
  j["norm_eps"] = 1e-6;
  j["rope_scaling"] = {{"type", "yarn"}, {"factor", 40}, {"original_max_positions", 4096}, {"mscale_all_dim", 1.0}};
  j["glu_quick_gelu"] = true;
  j["glu_linear_offset"] = 1.0;
  j["glu_clamp"] = 7.0;
  j["moe"]["aux_loss_coeff"] = 0.0001;
  j["moe"]["sequence_aux_loss"] = true;
  j["moe"]["topk_scaling"] = 2.5;
  const ModelSpec m = model_from_json(j);
  EXPECT_EQ(m.rope_base, 500000.0);
  EXPECT_EQ(m.norm_eps, 1e-6);
  EXPECT_EQ(m.rope_scaling.kind, RopeScalingKind::yarn);
  EXPECT_EQ(m.rope_scaling.mscale_all_dim, 1.0);
  EXPECT_EQ(m.glu_clamp, 7.0);
  EXPECT_EQ(m.moe.topk_scaling, 2.5);
  const ModelSpec back = model_from_json(model_to_json(m));
  EXPECT_EQ(model_to_json(back), model_to_json(m));
  EXPECT_EQ(back.rope_scaling.factor, 40.0);
  EXPECT_TRUE(back.moe.sequence_aux_loss);
}

TEST(ModelJson, DefaultsAreMegatronsAndBadValuesAreNamed) {
  const ModelSpec m = model_from_json(deepseek_like());
  EXPECT_EQ(m.rope_base, 10000.0);  // Megatron --rotary-base default
  EXPECT_EQ(m.norm_eps, 1e-5);      // Megatron --norm-epsilon default
  json j = deepseek_like();
  j["norm_eps"] = 0;
  EXPECT_EQ(thrown_field([&] { model_from_json(j); }), "model.norm_eps");
  j = deepseek_like();
  j["rope_scaling"] = {{"type", "ntk"}};
  EXPECT_EQ(thrown_field([&] { model_from_json(j); }), "rope_scaling.type");
  j["rope_scaling"] = {{"type", "llama3"}, {"factor", 8}};
  EXPECT_EQ(thrown_field([&] { model_from_json(j); }), "model.rope_scaling.original_max_positions");
}

TEST(ModelJson, EveryZooModelStatesItsRopeBaseAndEpsilon) {
  for (const auto& name : builtin_model_names()) {
    const ModelSpec m = builtin_model(name);
    EXPECT_GT(m.norm_eps, 0.0) << name;
    if (m.position == PositionEmbedding::rope) {
      EXPECT_GE(m.rope_base, 10000.0) << name;
    }
  }
  EXPECT_EQ(builtin_model("llama3-70b").rope_base, 500000.0);
  EXPECT_EQ(builtin_model("qwen2.5-72b").rope_base, 1e6);
  EXPECT_EQ(builtin_model("llama3.1-405b").rope_scaling.kind, RopeScalingKind::llama3);
}

}  // namespace
}  // namespace tessera
