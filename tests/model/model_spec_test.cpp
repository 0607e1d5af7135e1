// ModelSpec's MoE layer pattern (dense_layers, layer_freq) against a brute-force walk.
#include "model/model_spec.h"

#include <cstdint>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

namespace tessera {
namespace {

using tessera::testing::thrown_field;

ModelSpec moe_model(std::int64_t layers, std::int64_t dense_layers, std::int64_t layer_freq) {
  ModelSpec m;
  m.name = "moe";
  m.layers = layers;
  m.hidden = 64;
  m.ffn_hidden = 256;
  m.heads = 4;
  m.kv_heads = 4;
  m.head_dim = 16;
  m.vocab = 100;
  m.max_context = 128;
  m.moe.experts = 4;
  m.moe.top_k = 1;
  m.moe.expert_ffn_hidden = 64;
  m.moe.dense_layers = dense_layers;
  m.moe.layer_freq = layer_freq;
  m.validate();
  return m;
}

// Layer i is MoE when, past the leading dense layers, it closes a group of layer_freq.
bool brute_force_is_moe(std::int64_t i, std::int64_t dense, std::int64_t freq) {
  if (i < dense) return false;
  std::int64_t position_in_group = 0;  // 1-based position of layer i in its group
  for (std::int64_t j = dense; j <= i; ++j) position_in_group = position_in_group % freq + 1;
  return position_in_group == freq;
}

TEST(ModelSpec, MoeLayersInMatchesBruteForceOverAllRanges) {
  for (std::int64_t layers = 1; layers <= 13; ++layers)
    for (std::int64_t dense = 0; dense < layers; ++dense)
      for (std::int64_t freq = 1; freq <= layers; ++freq) {
        const ModelSpec m = moe_model(layers, dense, freq);
        for (std::int64_t i = 0; i < layers; ++i)
          ASSERT_EQ(m.is_moe_layer(i), brute_force_is_moe(i, dense, freq))
              << "layers " << layers << " dense " << dense << " freq " << freq << " i " << i;
        for (std::int64_t begin = 0; begin <= layers; ++begin)
          for (std::int64_t end = begin; end <= layers; ++end) {
            std::int64_t count = 0;
            for (std::int64_t i = begin; i < end; ++i) count += brute_force_is_moe(i, dense, freq);
            ASSERT_EQ(m.moe_layers_in(begin, end), count)
                << "layers " << layers << " dense " << dense << " freq " << freq << " ["
                << begin << ", " << end << ")";
          }
        ASSERT_EQ(m.moe_layers() + m.dense_mlp_layers(), layers);
      }
}

// Llama 4 Maverick: interleave_moe_layer_step 2 makes layers 1, 3, ..., 47 MoE.
TEST(ModelSpec, EveryOtherLayerFromLayerOne) {
  const ModelSpec m = moe_model(48, 0, 2);
  EXPECT_FALSE(m.is_moe_layer(0));
  EXPECT_TRUE(m.is_moe_layer(1));
  EXPECT_TRUE(m.is_moe_layer(47));
  EXPECT_EQ(m.moe_layers(), 24);
  EXPECT_EQ(m.moe_layers_in(0, 12), 6);
}

TEST(ModelSpec, NewFieldsAreValidated) {
  ModelSpec m = moe_model(8, 0, 1);
  m.moe.layer_freq = 0;
  EXPECT_EQ(thrown_field([&] { m.validate(); }), "model.moe.layer_freq");
  m = moe_model(8, 0, 1);
  m.moe.groups = 3;  // does not divide 4 experts
  m.moe.topk_groups = 1;
  EXPECT_EQ(thrown_field([&] { m.validate(); }), "model.moe.groups");
  m = moe_model(8, 0, 1);
  m.moe.groups = 2;
  EXPECT_EQ(thrown_field([&] { m.validate(); }), "model.moe.topk_groups");
  m = moe_model(8, 0, 1);
  m.mtp_layers = -1;
  EXPECT_EQ(thrown_field([&] { m.validate(); }), "model.mtp_layers");
  EXPECT_EQ(thrown_field([] { parse_router_scoring("topk"); }), "moe.scoring");
  EXPECT_EQ(parse_router_scoring(to_string(RouterScoring::sigmoid)), RouterScoring::sigmoid);
}

}  // namespace
}  // namespace tessera
