#include "formats/hf_config.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "catalog/model_source.h"
#include "core/error.h"
#include "formats/json_fields.h"
#include "model/parameter_count.h"

namespace tessera {
namespace {

using nlohmann::json;

std::string fixture_path(const std::string& file) {
  return std::string(TESSERA_SOURCE_DIR) + "/tests/fixtures/hf/" + file + ".json";
}

json hf_fixture(const std::string& file) {
  return json_fields::parse_file(fixture_path(file), "fixture");
}

ModelSpec load(const std::string& file) { return model_from_hf_config(hf_fixture(file), file); }

// The field of the Error `config` throws, or "<no error>".
std::string testing_thrown_field(const json& config) {
  try {
    model_from_hf_config(config, "broken");
  } catch (const Error& e) {
    return e.field();
  }
  return "<no error>";
}

// The Error's what() for `config`, or "" when it does not throw.
std::string error_of(const json& config) {
  try {
    model_from_hf_config(config, "broken");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// ---- parameter totals against the published numbers ----

struct Published {
  const char* fixture;
  double total;        // published parameter count
  const char* source;  // where the number comes from
};

class HfPublishedTotal : public ::testing::TestWithParam<Published> {};

TEST_P(HfPublishedTotal, WithinOnePercent) {
  const auto& p = GetParam();
  const ModelSpec m = load(p.fixture);
  // Papers count the main model; MTP modules (DeepSeek-V3's) come on top.
  const double total = count_parameters(m).main_total();
  EXPECT_NEAR(total / p.total, 1.0, 0.01)
      << p.fixture << ": counted " << total << ", published " << p.total << " (" << p.source
      << ")";
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, HfPublishedTotal,
    ::testing::Values(
        Published{"llama-2-7b", 6.738415616e9, "Llama 2 paper; 6,738,415,616 in safetensors"},
        Published{"llama-3-8b", 8.030261248e9, "Meta-Llama-3-8B model card: 8.03B"},
        Published{"mistral-7b-v0.1", 7.241732096e9, "Mistral-7B-v0.1: 7.24B"},
        Published{"mixtral-8x7b-v0.1", 46.7e9, "Mixtral of Experts paper: 46.7B total"},
        Published{"qwen2.5-7b", 7.61e9, "Qwen2.5-7B model card: 7.61B"},
        Published{"qwen1.5-moe-a2.7b", 14.3e9, "Qwen1.5-MoE-A2.7B blog: 14.3B total"},
        Published{"qwen3-30b-a3b", 30.5e9, "Qwen3-30B-A3B model card: 30.5B"},
        Published{"gpt2", 124.439808e6, "GPT-2 small: 124M (124,439,808)"},
        Published{"pythia-1b", 1.011781632e9, "Pythia paper Table 1: 1,011,781,632"},
        Published{"gpt-neox-20b", 20.55456768e9, "GPT-NeoX-20B paper: 20,554,567,680"},
        Published{"gpt-neo-125m", 125.198592e6, "GPT-Neo 125M: 125,198,592"},
        Published{"opt-125m", 125.239296e6, "OPT-125m: 125,239,296"},
        Published{"bloom-560m", 559.214592e6, "bloom-560m model card: 559,214,592"},
        Published{"falcon-7b", 6.921720704e9,
                  "Falcon-7B unique parameters (the hub's 7.22B counts the tied head twice)"},
        Published{"gemma-7b", 8.537680896e9, "Gemma report Table 2: 786M embedding + 7751M"},
        Published{"phi-3-mini-4k", 3.821079552e9, "Phi-3-mini model card: 3.8B (3,821,079,552)"},
        Published{"deepseek-v3", 671e9, "DeepSeek-V3 report: 671B total, MTP module excluded"},
        Published{"gpt-oss-20b", 20.91e9, "gpt-oss model card Table 1: 20.91B total"},
        Published{"qwen3-8b", 8.2e9, "Qwen3-8B model card: 8.2B"},
        Published{"qwen3-235b-a22b", 235e9, "Qwen3-235B-A22B model card: 235B in total"},
        Published{"llama4-maverick", 400e9, "Llama 4 model card: Maverick 400B total"}),
    [](const ::testing::TestParamInfo<Published>& info) {
      std::string name = info.param.fixture;
      for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return name;
    });

TEST(HfConfig, MoeActiveParametersMatchPublished) {
  // Mixtral paper: 12.9B active; Qwen1.5-MoE-A2.7B: 2.7B activated.
  EXPECT_NEAR(count_parameters(load("mixtral-8x7b-v0.1")).active() / 12.9e9, 1.0, 0.01);
  EXPECT_NEAR(count_parameters(load("qwen1.5-moe-a2.7b")).active() / 2.7e9, 1.0, 0.01);
  // Qwen3-235B-A22B model card: 22B activated; Llama 4 Maverick: 17B active.
  EXPECT_NEAR(count_parameters(load("qwen3-235b-a22b")).active(), 22e9, 0.5e9);
  EXPECT_NEAR(count_parameters(load("llama4-maverick")).active(), 17e9, 0.5e9);
  // gpt-oss model card Table 1: gpt-oss-20b 3.61B active, "Unembedding parameters are counted
  // towards active, but not embeddings".
  EXPECT_NEAR(count_parameters(load("gpt-oss-20b")).active_without_embedding(), 3.61e9, 0.005e9);
  // DeepSeek-V3 README_WEIGHTS.md: main model 36.6B activated, without the input embedding.
  EXPECT_NEAR(count_parameters(load("deepseek-v3")).active_without_embedding() -
                  count_parameters(load("deepseek-v3")).mtp_active,
              36.6e9, 0.05e9);
}

// ---- field mapping ----

TEST(HfConfig, Llama2MapsEveryField) {
  const ModelSpec m = load("llama-2-7b");
  EXPECT_EQ(m.name, "llama-2-7b");
  EXPECT_EQ(m.layers, 32);
  EXPECT_EQ(m.hidden, 4096);
  EXPECT_EQ(m.ffn_hidden, 11008);
  EXPECT_EQ(m.heads, 32);
  EXPECT_EQ(m.kv_heads, 32);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.vocab, 32000);
  EXPECT_EQ(m.max_context, 4096);
  EXPECT_EQ(m.mlp, MlpType::swiglu);
  EXPECT_EQ(m.attention, AttentionKind::mha);
  EXPECT_EQ(m.norm, NormType::rmsnorm);
  EXPECT_EQ(m.position, PositionEmbedding::rope);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.linear_bias);
  EXPECT_FALSE(m.qkv_bias);
  EXPECT_FALSE(m.is_moe());
}

TEST(HfConfig, Llama3IsGqa) {
  const ModelSpec m = load("llama-3-8b");
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.attention, AttentionKind::gqa);
  EXPECT_EQ(m.vocab, 128256);
}

TEST(HfConfig, Gpt2UsesItsOwnKeysAndDefaults) {
  const ModelSpec m = load("gpt2");
  EXPECT_EQ(m.layers, 12);
  EXPECT_EQ(m.hidden, 768);
  EXPECT_EQ(m.ffn_hidden, 4 * 768);  // n_inner absent: 4h
  EXPECT_EQ(m.heads, 12);
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_EQ(m.max_context, 1024);
  EXPECT_EQ(m.mlp, MlpType::gelu);
  EXPECT_EQ(m.norm, NormType::layernorm);
  EXPECT_EQ(m.position, PositionEmbedding::learned);
  EXPECT_TRUE(m.tied_embeddings);  // GPT-2's default when tie_word_embeddings is absent
  EXPECT_TRUE(m.linear_bias);
}

TEST(HfConfig, TieDefaultsFollowEachArchitecture) {
  json llama = hf_fixture("llama-2-7b");
  llama.erase("tie_word_embeddings");
  EXPECT_FALSE(model_from_hf_config(llama, "x").tied_embeddings);
  EXPECT_TRUE(load("gemma-7b").tied_embeddings);  // absent in Gemma's config: tied
  EXPECT_TRUE(load("bloom-560m").tied_embeddings);
  EXPECT_TRUE(load("opt-125m").tied_embeddings);
  EXPECT_FALSE(load("pythia-1b").tied_embeddings);
  json gpt2 = hf_fixture("gpt2");
  gpt2["tie_word_embeddings"] = false;
  EXPECT_FALSE(model_from_hf_config(gpt2, "x").tied_embeddings);
}

TEST(HfConfig, MixtralIsAllMoe) {
  const ModelSpec m = load("mixtral-8x7b-v0.1");
  EXPECT_TRUE(m.is_moe());
  EXPECT_EQ(m.moe.experts, 8);
  EXPECT_EQ(m.moe.top_k, 2);
  EXPECT_EQ(m.moe.expert_ffn_hidden, 14336);
  EXPECT_EQ(m.moe.shared_experts, 0);
  EXPECT_EQ(m.moe.dense_layers, 0);
  EXPECT_EQ(m.ffn_hidden, 0);
  EXPECT_EQ(m.attention, AttentionKind::gqa);
}

TEST(HfConfig, QwenBiasesAndSharedExperts) {
  const ModelSpec dense = load("qwen2.5-7b");
  EXPECT_TRUE(dense.qkv_bias);
  EXPECT_FALSE(dense.linear_bias);
  EXPECT_EQ(dense.kv_heads, 4);
  EXPECT_EQ(dense.attention, AttentionKind::gqa);  // use_sliding_window false: no window
  EXPECT_EQ(dense.sliding_window, 0);

  const ModelSpec moe = load("qwen1.5-moe-a2.7b");
  EXPECT_TRUE(moe.qkv_bias);
  EXPECT_EQ(moe.moe.experts, 60);
  EXPECT_EQ(moe.moe.top_k, 4);
  EXPECT_EQ(moe.moe.expert_ffn_hidden, 1408);
  EXPECT_EQ(moe.moe.shared_experts, 4);  // one 5632-wide shared expert = 4 x 1408
  EXPECT_EQ(moe.moe.dense_layers, 0);

  const ModelSpec q3 = load("qwen3-30b-a3b");
  EXPECT_FALSE(q3.qkv_bias);
  EXPECT_EQ(q3.head_dim, 128);  // explicit, not hidden / heads (= 64)
  EXPECT_EQ(q3.moe.experts, 128);
  EXPECT_EQ(q3.moe.shared_experts, 0);
}

TEST(HfConfig, QwenMoeDenseLayersFromSparseStepAndMlpOnlyLayers) {
  json c = hf_fixture("qwen3-30b-a3b");
  c["decoder_sparse_step"] = 2;  // layers 1, 3, 5, ... are MoE
  c["mlp_only_layers"] = {1};    // ... except layer 1: 3, 5, ..., 47
  const ModelSpec m = model_from_hf_config(c, "x");
  EXPECT_EQ(m.moe.dense_layers, 2);
  EXPECT_EQ(m.moe.layer_freq, 2);
  EXPECT_EQ(m.dense_mlp_layers(), 25);
  for (std::int64_t i = 0; i < 48; ++i)
    EXPECT_EQ(m.is_moe_layer(i), i >= 3 && i % 2 == 1) << i;
  EXPECT_EQ(m.ffn_hidden, 6144);

  c = hf_fixture("qwen3-30b-a3b");
  c["mlp_only_layers"] = {0, 1, 2, 3};  // leading dense layers
  const ModelSpec leading = model_from_hf_config(c, "x");
  EXPECT_EQ(leading.moe.dense_layers, 4);
  EXPECT_EQ(leading.moe.layer_freq, 1);
}

// A dense layer in the middle of an all-MoE stack is not "k dense, then every n-th": the error
// names the key that made the pattern.
TEST(HfConfigErrors, InexpressibleLayerPatternNamesTheKey) {
  json c = hf_fixture("qwen3-30b-a3b");
  c["mlp_only_layers"] = {5};
  EXPECT_EQ(testing_thrown_field(c), "model.mlp_only_layers");
  EXPECT_NE(error_of(c).find("are not k leading dense layers"), std::string::npos) << error_of(c);
  c = hf_fixture("qwen3-30b-a3b");
  c["decoder_sparse_step"] = 49;  // no layer (i + 1) % 49 == 0 among 48
  EXPECT_EQ(testing_thrown_field(c), "model.decoder_sparse_step");
  json ds = hf_fixture("deepseek-v3");
  ds["first_k_dense_replace"] = 0;
  ds["moe_layer_freq"] = 2;  // MoE layers 0, 2, 4, ...: layer 0 cannot close a group of 2
  EXPECT_EQ(testing_thrown_field(ds), "model.moe_layer_freq");
  json llama4 = hf_fixture("llama4-maverick");
  llama4["text_config"]["moe_layers"] = {1, 2};
  EXPECT_EQ(testing_thrown_field(llama4), "model.moe_layers");
}

TEST(HfConfig, QwenThreeHasQkNorm) {
  const ModelSpec dense = load("qwen3-8b");
  EXPECT_TRUE(dense.qk_norm);
  EXPECT_EQ(dense.head_dim, 128);
  EXPECT_EQ(dense.kv_heads, 8);
  EXPECT_FALSE(dense.qkv_bias);
  const ModelSpec moe = load("qwen3-235b-a22b");
  EXPECT_TRUE(moe.qk_norm);
  EXPECT_EQ(moe.layers, 94);
  EXPECT_EQ(moe.moe.experts, 128);
  EXPECT_EQ(moe.moe.top_k, 8);
  EXPECT_EQ(moe.moe.expert_ffn_hidden, 1536);
  EXPECT_EQ(moe.moe.dense_layers, 0);
  EXPECT_EQ(moe.moe.layer_freq, 1);
  EXPECT_EQ(moe.moe.scoring, RouterScoring::softmax);
  EXPECT_EQ(moe.ffn_hidden, 0);  // no dense layer: intermediate_size is unused
  EXPECT_FALSE(load("qwen2.5-7b").qk_norm);
  EXPECT_FALSE(load("llama-3-8b").qk_norm);
}

TEST(HfConfig, DeepseekV3MtpGroupsAndScoring) {
  const ModelSpec m = load("deepseek-v3");
  EXPECT_EQ(m.mtp_layers, 1);                         // num_nextn_predict_layers
  EXPECT_EQ(m.moe.scoring, RouterScoring::sigmoid);   // scoring_func
  EXPECT_EQ(m.moe.groups, 8);                         // n_group
  EXPECT_EQ(m.moe.topk_groups, 4);                    // topk_group
  EXPECT_EQ(m.moe.layer_freq, 1);                     // moe_layer_freq
  // Kimi K2: the same architecture with one group (no group limit) and no MTP module.
  const ModelSpec k2 = load("kimi-k2");
  EXPECT_EQ(k2.attention, AttentionKind::mla);
  EXPECT_EQ(k2.heads, 64);
  EXPECT_EQ(k2.moe.experts, 384);
  EXPECT_EQ(k2.moe.dense_layers, 1);
  EXPECT_EQ(k2.moe.groups, 0);
  EXPECT_EQ(k2.moe.topk_groups, 0);
  EXPECT_EQ(k2.mtp_layers, 0);
  EXPECT_TRUE(k2.moe.router_bias);
  EXPECT_EQ(k2.moe.scoring, RouterScoring::sigmoid);
  // DeepSeek's moe_layer_freq (layer i is MoE when i >= first_k and i % freq == 0) maps exactly:
  // with first_k 3 and freq 2 the MoE layers are 4, 6, ..., 60.
  json c = hf_fixture("deepseek-v3");
  c["moe_layer_freq"] = 2;
  const ModelSpec every_other = model_from_hf_config(c, "x");
  for (std::int64_t i = 0; i < 61; ++i)
    EXPECT_EQ(every_other.is_moe_layer(i), i >= 3 && i % 2 == 0) << i;
  // V2 defaults: softmax gate; "greedy" routing is not group-limited.
  c = hf_fixture("deepseek-v3");
  c["architectures"] = {"DeepseekV2ForCausalLM"};
  for (const char* key : {"scoring_func", "topk_method", "num_nextn_predict_layers"}) c.erase(key);
  const ModelSpec v2 = model_from_hf_config(c, "x");
  EXPECT_EQ(v2.moe.scoring, RouterScoring::softmax);
  EXPECT_EQ(v2.moe.groups, 0);
  EXPECT_FALSE(v2.moe.router_bias);
  EXPECT_EQ(v2.mtp_layers, 0);
  c["scoring_func"] = "relu";
  EXPECT_EQ(testing_thrown_field(c), "model.scoring_func");
}

TEST(HfConfig, Llama4TextConfigInterleavesMoeLayers) {
  const ModelSpec m = load("llama4-maverick");
  EXPECT_EQ(m.layers, 48);
  EXPECT_EQ(m.hidden, 5120);
  EXPECT_EQ(m.heads, 40);
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.vocab, 202048);
  EXPECT_EQ(m.max_context, 1048576);
  EXPECT_EQ(m.moe.experts, 128);
  EXPECT_EQ(m.moe.top_k, 1);
  EXPECT_EQ(m.moe.expert_ffn_hidden, 8192);   // intermediate_size
  EXPECT_EQ(m.ffn_hidden, 16384);             // intermediate_size_mlp
  EXPECT_EQ(m.moe.shared_experts, 1);
  EXPECT_EQ(m.moe.dense_layers, 0);
  EXPECT_EQ(m.moe.layer_freq, 2);             // interleave_moe_layer_step
  EXPECT_EQ(m.moe.scoring, RouterScoring::sigmoid);
  EXPECT_FALSE(m.moe.router_bias);
  EXPECT_FALSE(m.tied_embeddings);
  EXPECT_FALSE(m.qk_norm);
  EXPECT_EQ(m.attention, AttentionKind::gqa);
  EXPECT_TRUE(m.is_moe_layer(1));
  EXPECT_FALSE(m.is_moe_layer(0));
  // Scout's step 1: every layer MoE, no dense width needed.
  json scout = hf_fixture("llama4-maverick");
  scout["text_config"]["interleave_moe_layer_step"] = 1;
  scout["text_config"]["num_local_experts"] = 16;
  scout["text_config"].erase("intermediate_size_mlp");
  const ModelSpec s = model_from_hf_config(scout, "scout");
  EXPECT_EQ(s.moe_layers(), 48);
  EXPECT_EQ(s.ffn_hidden, 0);
  // Llama 4 model card: Scout 17B active (its 109B total also holds the vision encoder, which
  // the import leaves out: the text model is 107.8B).
  EXPECT_NEAR(count_parameters(s).active(), 17e9, 0.5e9);
  // An explicit moe_layers list wins over the step; the text-only class reads the flat config.
  json flat = hf_fixture("llama4-maverick").at("text_config");
  flat["architectures"] = {"Llama4ForCausalLM"};
  flat["moe_layers"] = {3, 7, 11, 15, 19, 23, 27, 31, 35, 39, 43, 47};
  const ModelSpec listed = model_from_hf_config(flat, "x");
  EXPECT_EQ(listed.moe.dense_layers, 0);
  EXPECT_EQ(listed.moe.layer_freq, 4);
  EXPECT_EQ(listed.moe_layers(), 12);
}

TEST(HfConfig, DeepseekV3IsMlaWithLeadingDenseLayers) {
  const ModelSpec m = load("deepseek-v3");
  EXPECT_EQ(m.attention, AttentionKind::mla);
  EXPECT_EQ(m.mla.q_lora_rank, 1536);
  EXPECT_EQ(m.mla.kv_lora_rank, 512);
  EXPECT_EQ(m.mla.qk_nope_head_dim, 128);
  EXPECT_EQ(m.mla.qk_rope_head_dim, 64);
  EXPECT_EQ(m.mla.v_head_dim, 128);
  EXPECT_EQ(m.head_dim, 192);
  EXPECT_EQ(m.moe.experts, 256);
  EXPECT_EQ(m.moe.top_k, 8);
  EXPECT_EQ(m.moe.expert_ffn_hidden, 2048);
  EXPECT_EQ(m.moe.shared_experts, 1);
  EXPECT_EQ(m.moe.dense_layers, 3);
  EXPECT_TRUE(m.moe.router_bias);  // e_score_correction_bias
  EXPECT_EQ(m.ffn_hidden, 18432);
  EXPECT_EQ(m.max_context, 163840);
  EXPECT_FALSE(m.tied_embeddings);
}

TEST(HfConfig, DeepseekWithoutQLoraRank) {
  json c = hf_fixture("deepseek-v3");
  c["q_lora_rank"] = nullptr;  // DeepSeek-V2-Lite style
  EXPECT_EQ(model_from_hf_config(c, "x").mla.q_lora_rank, 0);
}

TEST(HfConfig, GptOssAlternatesWindowedLayers) {
  const ModelSpec m = load("gpt-oss-20b");
  EXPECT_EQ(m.attention, AttentionKind::gqa_swa);
  EXPECT_EQ(m.sliding_window, 128);
  EXPECT_EQ(m.head_dim, 64);  // explicit; hidden / heads would be 45
  EXPECT_EQ(m.kv_heads, 8);
  EXPECT_TRUE(m.attention_sinks);
  EXPECT_TRUE(m.linear_bias);
  EXPECT_TRUE(m.moe.router_bias);
  EXPECT_EQ(m.moe.experts, 32);
  EXPECT_EQ(m.moe.top_k, 4);
  EXPECT_EQ(m.moe.expert_ffn_hidden, 2880);
  EXPECT_EQ(m.norm, NormType::rmsnorm);
}

TEST(HfConfig, GptOssWithoutLayerTypesUsesTheDefaultAlternation) {
  json c = hf_fixture("gpt-oss-20b");
  c.erase("layer_types");
  EXPECT_EQ(model_from_hf_config(c, "x").attention, AttentionKind::gqa_swa);
}

TEST(HfConfig, WindowOnEveryLayerIsNotGqaSwa) {
  const ModelSpec mistral = load("mistral-7b-v0.1");
  EXPECT_EQ(mistral.attention, AttentionKind::gqa);
  EXPECT_EQ(mistral.sliding_window, 0);
  EXPECT_EQ(load("phi-3-mini-4k").attention, AttentionKind::mha);
  json c = hf_fixture("gpt-oss-20b");
  c["layer_types"] = json::array();
  for (int i = 0; i < 24; ++i) c["layer_types"].push_back("sliding_attention");
  EXPECT_EQ(model_from_hf_config(c, "x").attention, AttentionKind::gqa);
}

TEST(HfConfig, GptNeoAlternatesLocalLayers) {
  const ModelSpec m = load("gpt-neo-125m");
  EXPECT_EQ(m.attention, AttentionKind::gqa_swa);
  EXPECT_EQ(m.sliding_window, 256);
  EXPECT_EQ(m.ffn_hidden, 3072);  // intermediate_size null: 4h
  EXPECT_EQ(m.position, PositionEmbedding::learned);
  json c = hf_fixture("gpt-neo-125m");
  c.erase("attention_layers");  // expanded from attention_types instead
  EXPECT_EQ(model_from_hf_config(c, "x").attention, AttentionKind::gqa_swa);
}

// Issue 13: attention_types expands [pattern, repeats]; a hostile repeats count is refused
// before it allocates, by name, and a repeats count stored as unsigned 2^63 is not wrapped.
TEST(HfConfigErrors, AttentionTypesExpansionIsBounded) {
  json c = hf_fixture("gpt-neo-125m");
  c.erase("attention_layers");
  for (const char* repeats : {"1000000000", "9223372036854775808", "true"}) {
    c["attention_types"] = json::parse(std::string(R"([[["global", "local"], )") + repeats + "]]");
    try {
      (void)model_from_hf_config(c, "x");
      ADD_FAILURE() << "expected an error for repeats " << repeats;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.field()).find("attention_types"), std::string::npos) << e.what();
    }
  }
}

TEST(HfConfig, LegacyArchitectures) {
  const ModelSpec bloom = load("bloom-560m");
  EXPECT_EQ(bloom.position, PositionEmbedding::alibi);
  EXPECT_TRUE(bloom.embedding_norm);
  EXPECT_TRUE(bloom.linear_bias);
  EXPECT_EQ(bloom.ffn_hidden, 4096);
  EXPECT_EQ(bloom.max_context, 2048);

  const ModelSpec opt = load("opt-125m");
  EXPECT_EQ(opt.position, PositionEmbedding::learned);
  EXPECT_EQ(opt.mlp, MlpType::gelu);  // ReLU: the same 2-matrix MLP
  EXPECT_EQ(opt.ffn_hidden, 3072);

  const ModelSpec falcon = load("falcon-7b");
  EXPECT_EQ(falcon.kv_heads, 1);  // multi_query
  EXPECT_EQ(falcon.attention, AttentionKind::gqa);
  EXPECT_EQ(falcon.head_dim, 64);
  EXPECT_EQ(falcon.ffn_hidden, 4 * 4544);
  EXPECT_EQ(falcon.max_context, 2048);
  EXPECT_FALSE(falcon.linear_bias);

  const ModelSpec neox = load("gpt-neox-20b");
  EXPECT_EQ(neox.position, PositionEmbedding::rope);
  EXPECT_EQ(neox.norm, NormType::layernorm);
  EXPECT_TRUE(neox.linear_bias);
  EXPECT_FALSE(neox.tied_embeddings);
}

TEST(HfConfig, GemmaIsGatedWithWideHeads) {
  const ModelSpec m = load("gemma-7b");
  EXPECT_EQ(m.mlp, MlpType::swiglu);  // GeGLU: three matrices
  EXPECT_EQ(m.head_dim, 256);
  EXPECT_EQ(m.norm, NormType::rmsnorm);
}

TEST(HfConfig, NemotronIsRelu2WithLayerNorm) {
  const json c = {{"architectures", {"NemotronForCausalLM"}},
                  {"hidden_act", "relu2"},
                  {"hidden_size", 4096},
                  {"intermediate_size", 16384},
                  {"max_position_embeddings", 4096},
                  {"num_attention_heads", 48},
                  {"num_hidden_layers", 32},
                  {"num_key_value_heads", 8},
                  {"head_dim", 128},
                  {"vocab_size", 256000}};
  const ModelSpec m = model_from_hf_config(c, "nemotron");
  EXPECT_EQ(m.mlp, MlpType::relu2);
  EXPECT_EQ(m.norm, NormType::layernorm);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.attention, AttentionKind::gqa);
  EXPECT_FALSE(m.tied_embeddings);
}

TEST(HfConfig, LlamaAttentionBiasFlags) {
  json c = hf_fixture("llama-3-8b");
  c["attention_bias"] = true;
  EXPECT_TRUE(model_from_hf_config(c, "x").qkv_bias);
  c["mlp_bias"] = true;
  const ModelSpec both = model_from_hf_config(c, "x");
  EXPECT_TRUE(both.linear_bias);
  EXPECT_FALSE(both.qkv_bias);
}

TEST(HfConfig, ModelTypeStandsInForArchitectures) {
  json c = hf_fixture("llama-2-7b");
  c.erase("architectures");
  EXPECT_EQ(model_from_hf_config(c, "x").hidden, 4096);
  c["model_type"] = "t5";
  EXPECT_NE(error_of(c).find("model.model_type"), std::string::npos);
}

TEST(HfConfig, FirstSupportedArchitectureWins) {
  json c = hf_fixture("llama-2-7b");
  c["architectures"] = {"SomethingElse", "LlamaForCausalLM"};
  EXPECT_EQ(model_from_hf_config(c, "x").layers, 32);
}

TEST(HfConfig, LoadModelDispatchesAHfConfigPath) {
  const ModelSpec m = load_model(fixture_path("qwen2.5-7b"));
  EXPECT_EQ(m.hidden, 3584);
  EXPECT_TRUE(m.qkv_bias);
}

// ---- errors name the field ----

TEST(HfConfigErrors, UnsupportedArchitectureListsTheSupportedOnes) {
  json c = hf_fixture("llama-2-7b");
  c["architectures"] = {"T5ForConditionalGeneration"};
  const std::string what = error_of(c);
  EXPECT_NE(what.find("model.architectures"), std::string::npos) << what;
  EXPECT_NE(what.find("unsupported architecture 'T5ForConditionalGeneration'"),
            std::string::npos) << what;
  EXPECT_NE(what.find("LlamaForCausalLM, MistralForCausalLM"), std::string::npos) << what;
  EXPECT_NE(what.find("DeepseekV3ForCausalLM"), std::string::npos) << what;
  EXPECT_EQ(what.find("RWForCausalLM"), std::string::npos) << what;  // alias, not listed
  EXPECT_EQ(supported_hf_architectures().size(), 24u);
}

TEST(HfConfigErrors, MissingKeyIsNamed) {
  json c = hf_fixture("llama-2-7b");
  c.erase("hidden_size");
  EXPECT_NE(error_of(c).find("model.hidden_size: missing"), std::string::npos) << error_of(c);

  json gpt2 = hf_fixture("gpt2");
  gpt2.erase("n_embd");
  EXPECT_NE(error_of(gpt2).find("model.n_embd: missing"), std::string::npos) << error_of(gpt2);

  json ds = hf_fixture("deepseek-v3");
  ds.erase("kv_lora_rank");
  EXPECT_NE(error_of(ds).find("model.kv_lora_rank"), std::string::npos) << error_of(ds);

  json mixtral = hf_fixture("mixtral-8x7b-v0.1");
  mixtral["num_local_experts"] = nullptr;
  EXPECT_NE(error_of(mixtral).find("model.num_local_experts"), std::string::npos);

  json qwen = hf_fixture("qwen1.5-moe-a2.7b");
  qwen.erase("shared_expert_intermediate_size");
  EXPECT_NE(error_of(qwen).find("model.shared_expert_intermediate_size"), std::string::npos);

  EXPECT_NE(error_of(json{{"hidden_size", 8}}).find("model.architectures"), std::string::npos);
}

TEST(HfConfigErrors, MalformedValuesAreNamed) {
  json c = hf_fixture("llama-2-7b");
  c["hidden_size"] = "4096";
  EXPECT_NE(error_of(c).find("model.hidden_size: expected an integer"), std::string::npos)
      << error_of(c);

  c = hf_fixture("llama-2-7b");
  c["num_hidden_layers"] = 32.5;
  EXPECT_NE(error_of(c).find("model.num_hidden_layers"), std::string::npos) << error_of(c);

  c = hf_fixture("llama-2-7b");
  c["tie_word_embeddings"] = "no";
  EXPECT_NE(error_of(c).find("model.tie_word_embeddings"), std::string::npos) << error_of(c);

  c = hf_fixture("llama-2-7b");
  c["architectures"] = "LlamaForCausalLM";
  EXPECT_NE(error_of(c).find("model.architectures: expected a list"), std::string::npos);

  c = hf_fixture("gpt-oss-20b");
  c["layer_types"] = {1, 2};
  EXPECT_NE(error_of(c).find("model.layer_types"), std::string::npos) << error_of(c);

  c = hf_fixture("gpt-neo-125m");
  c.erase("attention_layers");
  c["attention_types"] = {{"global", 6}};
  EXPECT_NE(error_of(c).find("model.attention_types"), std::string::npos) << error_of(c);

  c = hf_fixture("qwen3-30b-a3b");
  c["mlp_only_layers"] = "none";
  EXPECT_NE(error_of(c).find("model.mlp_only_layers"), std::string::npos) << error_of(c);

  EXPECT_NE(error_of(json::array()).find("model: expected a JSON object"), std::string::npos);
}

TEST(HfConfigErrors, AbsurdValuesFailValidation) {
  json c = hf_fixture("llama-2-7b");
  c["num_hidden_layers"] = 0;
  EXPECT_NE(error_of(c).find("model.layers"), std::string::npos) << error_of(c);

  c = hf_fixture("llama-2-7b");
  c["num_attention_heads"] = -32;
  EXPECT_NE(error_of(c).find("model.heads"), std::string::npos) << error_of(c);

  c = hf_fixture("llama-2-7b");
  c["num_attention_heads"] = 0;  // head_dim's default must not divide by zero
  EXPECT_NE(error_of(c).find("model.heads"), std::string::npos) << error_of(c);

  c = hf_fixture("llama-3-8b");
  c["num_key_value_heads"] = 3;
  EXPECT_NE(error_of(c).find("model.kv_heads"), std::string::npos) << error_of(c);

  c = hf_fixture("llama-2-7b");
  c["vocab_size"] = -1;
  EXPECT_NE(error_of(c).find("model.vocab"), std::string::npos) << error_of(c);

  c = hf_fixture("gpt2");
  c["n_embd"] = std::int64_t{4'000'000'000'000'000'000};  // 4h would overflow
  EXPECT_NE(error_of(c).find("model.hidden"), std::string::npos) << error_of(c);

  c = hf_fixture("mixtral-8x7b-v0.1");
  c["num_experts_per_tok"] = 9;
  EXPECT_NE(error_of(c).find("model.moe.top_k"), std::string::npos) << error_of(c);

  c = hf_fixture("mixtral-8x7b-v0.1");
  c["num_local_experts"] = 1;
  EXPECT_NE(error_of(c).find("model.num_local_experts"), std::string::npos) << error_of(c);

  c = hf_fixture("deepseek-v3");
  c["first_k_dense_replace"] = 61;  // no MoE layer left
  EXPECT_NE(error_of(c).find("model.first_k_dense_replace"), std::string::npos) << error_of(c);

  c = hf_fixture("deepseek-v3");
  c["kv_lora_rank"] = 0;
  EXPECT_NE(error_of(c).find("model.mla.kv_lora_rank"), std::string::npos) << error_of(c);

  c = hf_fixture("gpt-oss-20b");
  c["sliding_window"] = 0;
  EXPECT_NE(error_of(c).find("model.sliding_window"), std::string::npos) << error_of(c);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// ---- RoPE, norms, GPT-OSS's GLU, Gemma-2/3 (issue 12) ----

std::string error_field(const json& config) {
  try {
    model_from_hf_config(config, "x");
  } catch (const Error& e) {
    return e.field();
  }
  return "";
}

TEST(HfConfigRope, ThetaScalingAndEpsilonOfEachFamily) {
  const ModelSpec llama = load("llama-3-70b");  // rope_theta 500000, rms_norm_eps 1e-05
  EXPECT_EQ(llama.rope_base, 500000.0);
  EXPECT_EQ(llama.norm_eps, 1e-5);
  EXPECT_EQ(llama.rope_scaling.kind, RopeScalingKind::none);
  const ModelSpec ds = load("deepseek-v3");  // yarn factor 40 over 4096, mscale_all_dim 1
  EXPECT_EQ(ds.rope_scaling.kind, RopeScalingKind::yarn);
  EXPECT_EQ(ds.rope_scaling.factor, 40.0);
  EXPECT_EQ(ds.rope_scaling.original_max_positions, 4096);
  EXPECT_EQ(ds.rope_scaling.mscale_all_dim, 1.0);
  EXPECT_EQ(ds.norm_eps, 1e-6);
  EXPECT_EQ(ds.moe.topk_scaling, 2.5);
  EXPECT_TRUE(ds.moe.sequence_aux_loss);
  EXPECT_EQ(load("gpt2").norm_eps, 1e-5);  // layer_norm_epsilon
  json c = hf_fixture("llama-3-8b");
  c["rope_scaling"] = {{"rope_type", "llama3"}, {"factor", 8.0}, {"low_freq_factor", 1.0},
                       {"high_freq_factor", 4.0}, {"original_max_position_embeddings", 8192}};
  const ModelSpec scaled = model_from_hf_config(c, "llama-3.1-8b");
  EXPECT_EQ(scaled.rope_scaling.kind, RopeScalingKind::llama3);
  EXPECT_EQ(scaled.rope_scaling.high_freq_factor, 4.0);
  c["rope_scaling"] = {{"rope_type", "dynamic"}, {"factor", 2.0}};
  EXPECT_EQ(error_field(c), "model.rope_scaling.rope_type");
}

TEST(HfConfigRope, GptOssGluIsClampedQuickGelu) {
  const ModelSpec m = load("gpt-oss-120b");
  EXPECT_TRUE(m.glu_quick_gelu);
  EXPECT_EQ(m.glu_linear_offset, 1.0);
  EXPECT_EQ(m.glu_clamp, 7.0);  // swiglu_limit
  EXPECT_EQ(m.rope_base, 150000.0);
  EXPECT_EQ(m.rope_scaling.kind, RopeScalingKind::yarn);
  EXPECT_EQ(m.rope_scaling.factor, 32.0);
  EXPECT_EQ(m.swa_global_every, 2);
}

TEST(HfConfigGemma, Gemma2SoftCapsAlternatesWindowsAndKeepsItsHeadDim) {
  for (const char* name : {"gemma-2-9b", "gemma-2-27b"}) {
    const json c = hf_fixture(name);
    const ModelSpec m = load(name);
    EXPECT_EQ(m.head_dim, c["head_dim"].get<std::int64_t>()) << name;
    EXPECT_EQ(m.attention_logit_softcap, 50.0);
    EXPECT_EQ(m.final_logit_softcap, 30.0);
    EXPECT_EQ(m.query_pre_attn_scalar, c["query_pre_attn_scalar"].get<double>());
    EXPECT_EQ(m.attention, AttentionKind::gqa_swa);
    EXPECT_EQ(m.sliding_window, 4096);
    EXPECT_EQ(m.swa_global_every, 2);
    EXPECT_TRUE(m.tied_embeddings);
    EXPECT_EQ(m.mlp, MlpType::swiglu);  // GeGLU: three matrices
    EXPECT_EQ(m.norm_eps, 1e-6);
  }
  // Gemma-2-9B's 16 heads x 256 are wider than its 3584 hidden: Q and O are 3584 x 4096.
  const ModelSpec m = load("gemma-2-9b");
  const auto p = count_parameters(m);
  const double h = 3584, q = 16 * 256, kv = 8 * 256;
  EXPECT_EQ(p.attention_per_layer, 2 * h * q + 2 * h * kv);
}

TEST(HfConfigGemma, Gemma3TextConfigFiveLocalLayersPerGlobal) {
  const ModelSpec m = load("gemma-3-27b");  // Gemma3ForConditionalGeneration: text_config
  EXPECT_EQ(m.layers, 62);
  EXPECT_EQ(m.hidden, 5376);
  EXPECT_EQ(m.head_dim, 128);
  EXPECT_EQ(m.vocab, 262208);
  EXPECT_EQ(m.swa_global_every, 6);
  EXPECT_EQ(m.sliding_window, 1024);
  EXPECT_TRUE(m.qk_norm);
  EXPECT_EQ(m.attention_logit_softcap, 0.0);  // null: Gemma-3 has no soft-capping
  EXPECT_EQ(m.rope_scaling.kind, RopeScalingKind::linear);
  EXPECT_EQ(m.rope_scaling.factor, 8.0);
  EXPECT_EQ(m.rope_base, 1e6);
  json c = hf_fixture("gemma-3-27b");
  c["text_config"]["layer_types"] = json::array();
  for (int i = 0; i < 62; ++i) c["text_config"]["layer_types"].push_back(i % 2 ? "full_attention" : "sliding_attention");
  EXPECT_NE(model_from_hf_config(c, "g").attention, AttentionKind::gqa_swa);  // not the 5:1 pattern
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// ---- the model's name (issue 32: one rule for every source) ----

TEST(HfModelName, NameOrPathWinsByItsLastComponent) {
  const nlohmann::json repo = {{"_name_or_path", "meta-llama/Llama-2-7b-hf"}};
  EXPECT_EQ(hf_model_name(repo, "/data/x/config.json"), "Llama-2-7b-hf");
  EXPECT_EQ(hf_model_name({{"_name_or_path", "/ckpt/run-3/my-model/"}}, "config.json"), "my-model");
  EXPECT_EQ(hf_model_name({{"_name_or_path", "Phi-3-mini-4k-instruct"}}, "a.json"), "Phi-3-mini-4k-instruct");
}

TEST(HfModelName, WithoutNameOrPathTheFileNamesIt) {
  const nlohmann::json none = nlohmann::json::object();
  EXPECT_EQ(hf_model_name(none, "/models/qwen3-32b/config.json"), "qwen3-32b");
  EXPECT_EQ(hf_model_name(none, "/cache/hub/models--Qwen--Qwen3-32B/snapshots/9216db5781bf21249d130ec9da846c4624c16137/config.json"),
            "Qwen3-32B");
  EXPECT_EQ(hf_model_name(none, "tests/fixtures/hf/bloom-560m.json"), "bloom-560m");
  // An empty or "." _name_or_path names nothing: the file does.
  EXPECT_EQ(hf_model_name({{"_name_or_path", ""}}, "falcon-7b.json"), "falcon-7b");
  EXPECT_EQ(hf_model_name({{"_name_or_path", "."}}, "falcon-7b.json"), "falcon-7b");
}

TEST(HfModelName, ANonStringNameOrPathIsRefusedByName) {
  try {
    (void)hf_model_name({{"_name_or_path", 7}}, "config.json");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "model._name_or_path");
  }
}

TEST(HfModelName, LoadModelUsesIt) {
  const std::string hf_fixture = std::string(TESSERA_SOURCE_DIR) + "/tests/fixtures/hf/";
  EXPECT_EQ(load_model(hf_fixture + "llama-2-7b.json").name, "Llama-2-7b-hf");  // _name_or_path
  EXPECT_EQ(load_model(hf_fixture + "bloom-560m.json").name, "bloom-560m");     // the file
}

}  // namespace
}  // namespace tessera
