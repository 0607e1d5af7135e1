#include "export/megatron_model_flags.h"

#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "catalog/model_source.h"
#include "core/error.h"

namespace tessera {
namespace {

using nlohmann::json;

json hf_fixture(const std::string& name) {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/tests/fixtures/hf/" + name + ".json");
  return json::parse(in);
}

struct Flags {
  std::vector<std::string> args;
  bool has(const std::string& flag) const { return std::find(args.begin(), args.end(), flag) != args.end(); }
  std::string text(const std::string& flag) const {
    const auto it = std::find(args.begin(), args.end(), flag);
    return it == args.end() || it + 1 == args.end() ? "<absent>" : *(it + 1);
  }
  std::int64_t integer(const std::string& flag) const { return std::stoll(text(flag)); }
  double number(const std::string& flag) const { return std::stod(text(flag)); }
};

Flags flags_of(const char* zoo_name) { return {megatron_model_flags(builtin_model(zoo_name), 1, 4096)}; }

// The shape every family shares, checked against the Hugging Face config.json.
void expect_common_fields(const Flags& f, const json& hf) {
  EXPECT_EQ(f.integer("--num-layers"), hf["num_hidden_layers"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--hidden-size"), hf["hidden_size"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--num-attention-heads"), hf["num_attention_heads"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--padded-vocab-size"), hf["vocab_size"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--rotary-base"), hf["rope_theta"].get<double>());
  EXPECT_EQ(f.number("--norm-epsilon"), hf["rms_norm_eps"].get<double>());
  EXPECT_EQ(f.text("--normalization"), "RMSNorm");
  EXPECT_EQ(f.has("--untie-embeddings-and-output-weights"), !hf.value("tie_word_embeddings", false));
  EXPECT_GE(f.integer("--max-position-embeddings"), 4096);
}

void expect_gqa(const Flags& f, const json& hf) {
  EXPECT_TRUE(f.has("--group-query-attention"));
  EXPECT_EQ(f.integer("--num-query-groups"), hf["num_key_value_heads"].get<std::int64_t>());
  const std::int64_t head_dim = hf.contains("head_dim") ? hf["head_dim"].get<std::int64_t>()
                                                        : hf["hidden_size"].get<std::int64_t>() / hf["num_attention_heads"].get<std::int64_t>();
  EXPECT_EQ(f.integer("--kv-channels"), head_dim);
}

TEST(MegatronModelFlags, Llama3_70bMatchesItsHfConfig) {
  const Flags f = flags_of("llama3-70b");
  const json hf = hf_fixture("llama-3-70b");
  expect_common_fields(f, hf);
  expect_gqa(f, hf);
  EXPECT_EQ(f.integer("--ffn-hidden-size"), hf["intermediate_size"].get<std::int64_t>());
  EXPECT_TRUE(f.has("--swiglu"));
  EXPECT_TRUE(f.has("--disable-bias-linear"));
  EXPECT_FALSE(f.has("--add-qkv-bias"));
  EXPECT_FALSE(f.has("--use-rope-scaling"));  // rope_scaling null
  EXPECT_EQ(f.text("--position-embedding-type"), "rope");
}

TEST(MegatronModelFlags, Qwen25_72bMatchesItsHfConfig) {
  const Flags f = flags_of("qwen2.5-72b");
  const json hf = hf_fixture("qwen2.5-72b");
  expect_common_fields(f, hf);
  expect_gqa(f, hf);
  EXPECT_EQ(f.integer("--ffn-hidden-size"), hf["intermediate_size"].get<std::int64_t>());
  EXPECT_TRUE(f.has("--add-qkv-bias"));  // Qwen2Attention: q/k/v biases
  EXPECT_TRUE(f.has("--disable-bias-linear"));
}

TEST(MegatronModelFlags, Mixtral8x7bMatchesItsHfConfig) {
  const Flags f = flags_of("mixtral-8x7b");
  const json hf = hf_fixture("mixtral-8x7b-v0.1");
  expect_common_fields(f, hf);
  expect_gqa(f, hf);
  EXPECT_EQ(f.integer("--num-experts"), hf["num_local_experts"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--moe-router-topk"), hf["num_experts_per_tok"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--moe-ffn-hidden-size"), hf["intermediate_size"].get<std::int64_t>());
  EXPECT_FALSE(f.has("--moe-shared-expert-intermediate-size"));
  EXPECT_FALSE(f.has("--moe-layer-freq"));  // every layer MoE
  EXPECT_EQ(f.text("--moe-router-load-balancing-type"), "aux_loss");
  EXPECT_EQ(f.number("--moe-aux-loss-coeff"), hf["router_aux_loss_coef"].get<double>());
  EXPECT_FALSE(f.has("--moe-router-score-function"));  // softmax, Megatron's default
}

TEST(MegatronModelFlags, DeepseekV3MatchesItsHfConfig) {
  const Flags f = flags_of("deepseek-v3");
  const json hf = hf_fixture("deepseek-v3");
  expect_common_fields(f, hf);
  EXPECT_TRUE(f.has("--multi-latent-attention"));
  EXPECT_FALSE(f.has("--group-query-attention"));
  EXPECT_EQ(f.integer("--q-lora-rank"), hf["q_lora_rank"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--kv-lora-rank"), hf["kv_lora_rank"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--qk-head-dim"), hf["qk_nope_head_dim"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--qk-pos-emb-head-dim"), hf["qk_rope_head_dim"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--v-head-dim"), hf["v_head_dim"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--ffn-hidden-size"), hf["intermediate_size"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--num-experts"), hf["n_routed_experts"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--moe-router-topk"), hf["num_experts_per_tok"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--moe-ffn-hidden-size"), hf["moe_intermediate_size"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--moe-shared-expert-intermediate-size"),
            hf["n_shared_experts"].get<std::int64_t>() * hf["moe_intermediate_size"].get<std::int64_t>());
  // first_k_dense_replace dense layers, then MoE: an explicit list.
  const std::string freq = f.text("--moe-layer-freq");
  const auto dense = hf["first_k_dense_replace"].get<std::size_t>();
  EXPECT_EQ(freq.substr(0, 2 * dense + 2), "[" + std::string("0,0,0,").substr(0, 2 * dense) + "1");
  EXPECT_EQ(f.text("--moe-router-score-function"), hf["scoring_func"].get<std::string>());
  EXPECT_TRUE(f.has("--moe-router-enable-expert-bias"));  // noaux_tc: e_score_correction_bias
  EXPECT_EQ(f.integer("--moe-router-num-groups"), hf["n_group"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--moe-router-group-topk"), hf["topk_group"].get<std::int64_t>());
  EXPECT_EQ(f.number("--moe-router-topk-scaling-factor"), hf["routed_scaling_factor"].get<double>());
  EXPECT_EQ(f.text("--moe-router-load-balancing-type"), "seq_aux_loss");
  EXPECT_EQ(f.number("--moe-aux-loss-coeff"), hf["aux_loss_alpha"].get<double>());
  EXPECT_EQ(f.integer("--mtp-num-layers"), hf["num_nextn_predict_layers"].get<std::int64_t>());
  const json& yarn = hf["rope_scaling"];
  EXPECT_EQ(f.text("--rope-type"), "yarn");
  EXPECT_EQ(f.number("--rotary-scaling-factor"), yarn["factor"].get<double>());
  EXPECT_EQ(f.number("--mscale"), yarn["mscale"].get<double>());
  EXPECT_EQ(f.number("--mscale-all-dim"), yarn["mscale_all_dim"].get<double>());
  EXPECT_EQ(f.text("--position-embedding-type"), "rope");  // MTP needs rope; MLA's yarn is --rope-type
}

TEST(MegatronModelFlags, GptOss120bMatchesItsHfConfig) {
  const Flags f = flags_of("gpt-oss-120b");
  const json hf = hf_fixture("gpt-oss-120b");
  expect_common_fields(f, hf);
  expect_gqa(f, hf);
  EXPECT_EQ(f.integer("--num-experts"), hf["num_local_experts"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--moe-router-topk"), hf["num_experts_per_tok"].get<std::int64_t>());
  EXPECT_EQ(f.integer("--moe-ffn-hidden-size"), hf["intermediate_size"].get<std::int64_t>());
  // Not plain SwiGLU: Megatron's clamped quick-GELU GLU with the +1 offset.
  EXPECT_FALSE(f.has("--swiglu"));
  EXPECT_TRUE(f.has("--quick-geglu"));
  EXPECT_EQ(f.number("--glu-linear-offset"), 1.0);
  EXPECT_EQ(f.number("--activation-func-clamp-value"), hf["swiglu_limit"].get<double>());
  EXPECT_EQ(f.text("--softmax-type"), "learnable");  // attention sinks
  EXPECT_EQ(f.text("--window-size"), std::to_string(hf["sliding_window"].get<int>() - 1) + ",0");
  EXPECT_EQ(f.integer("--window-attn-skip-freq"), 2);  // sliding, full, sliding, ...
  EXPECT_FALSE(f.has("--disable-bias-linear"));        // attention_bias, expert biases
  const json& yarn = hf["rope_scaling"];
  EXPECT_EQ(f.text("--position-embedding-type"), "yarn");
  EXPECT_EQ(f.number("--rotary-scaling-factor"), yarn["factor"].get<double>());
  EXPECT_EQ(f.integer("--yarn-original-max-position-embeddings"), yarn["original_max_position_embeddings"].get<std::int64_t>());
  EXPECT_EQ(f.number("--yarn-beta-fast"), yarn["beta_fast"].get<double>());
  EXPECT_EQ(f.number("--yarn-beta-slow"), yarn["beta_slow"].get<double>());
}

TEST(MegatronModelFlags, VocabularyPaddingMatchesTheModel) {
  // Megatron pads to a multiple of divisor x tp: the divisor keeps that equal to the vocabulary.
  for (const auto& [vocab, tp] : {std::pair{128256, 8}, std::pair{201088, 8}, std::pair{129280, 16}, std::pair{152064, 4}}) {
    const std::int64_t d = megatron_vocab_divisor(vocab, tp);
    EXPECT_EQ(vocab % (d * tp), 0) << vocab;
    EXPECT_EQ(megatron_padded_vocab(vocab, tp), vocab);
  }
  EXPECT_EQ(megatron_padded_vocab(50257, 8), 50264);  // GPT-2's vocabulary: tp - 1 rows at most
}

TEST(MegatronModelFlags, Llama31RopeScalingIsMegatronsFixedOne) {
  const Flags f = flags_of("llama3.1-405b");
  EXPECT_TRUE(f.has("--use-rope-scaling"));
  EXPECT_EQ(f.number("--rope-scaling-factor"), 8.0);
  ModelSpec other = builtin_model("llama3.1-405b");
  other.rope_scaling.factor = 16;
  EXPECT_THROW(megatron_model_flags(other, 1, 4096), Error);
}

}  // namespace
}  // namespace tessera
