// count_parameters against closed forms and hand sums.
#include "model/parameter_count.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace tessera {
namespace {

using i64 = std::int64_t;

// GPT-2/3 style: biases everywhere, layernorm, learned positions, tied embeddings, ffn 4h.
ModelSpec gpt(i64 layers, i64 hidden, i64 heads, i64 vocab, i64 seq) {
  ModelSpec m;
  m.name = "gpt";
  m.layers = layers;
  m.hidden = hidden;
  m.ffn_hidden = 4 * hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.head_dim = hidden / heads;
  m.vocab = vocab;
  m.max_context = seq;
  m.mlp = MlpType::gelu;
  m.attention = AttentionKind::mha;
  m.norm = NormType::layernorm;
  m.position = PositionEmbedding::learned;
  m.tied_embeddings = true;
  m.linear_bias = true;
  m.validate();
  return m;
}

// Llama style: SwiGLU, GQA, RMSNorm, RoPE, no biases, untied.
ModelSpec llama(i64 layers, i64 hidden, i64 ffn, i64 heads, i64 kv_heads, i64 vocab) {
  ModelSpec m;
  m.name = "llama";
  m.layers = layers;
  m.hidden = hidden;
  m.ffn_hidden = ffn;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.head_dim = hidden / heads;
  m.vocab = vocab;
  m.max_context = 8192;
  m.mlp = MlpType::swiglu;
  m.attention = kv_heads == heads ? AttentionKind::mha : AttentionKind::gqa;
  m.norm = NormType::rmsnorm;
  m.position = PositionEmbedding::rope;
  m.tied_embeddings = false;
  return m;  // not validated: MoE tests zero ffn_hidden and add experts first
}

// Narayanan et al. SC'21 (arXiv 2104.04473) Sec. 5.1: P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12lh))
// = l (12h^2 + 13h) + (V + s) h. The paper's formula leaves out the final layernorm (2h), which
// count_parameters keeps; everything else must agree to the parameter.
TEST(ParameterCount, GptMatchesMegatronClosedForm) {
  struct Shape { i64 layers, hidden, heads; };
  const Shape shapes[] = {{24, 2304, 24},   {30, 3072, 32},    {36, 4096, 32},
                          {80, 12288, 96},  {105, 20480, 128}, {128, 25600, 160},
                          {2, 64, 4}};
  const i64 vocab = 51200;
  const i64 seq = 2048;
  for (const auto& s : shapes) {
    SCOPED_TRACE(::testing::Message() << "l=" << s.layers << " h=" << s.hidden);
    const auto c = count_parameters(gpt(s.layers, s.hidden, s.heads, vocab, seq));
    const i64 l = s.layers;
    const i64 h = s.hidden;
    const i64 closed_form = l * (12 * h * h + 13 * h) + (vocab + seq) * h;
    EXPECT_EQ(c.final_norm, static_cast<double>(2 * h));
    EXPECT_EQ(c.total() - c.final_norm, static_cast<double>(closed_form));
    // The same in the paper's factored form, to double precision.
    const double hd = static_cast<double>(h);
    const double factored =
        12.0 * l * hd * hd * (1.0 + 13.0 / (12.0 * hd) + (vocab + seq) / (12.0 * l * hd));
    EXPECT_NEAR(c.total() - c.final_norm, factored, factored * 1e-12);
    // Where the parameters live.
    EXPECT_EQ(c.embedding, static_cast<double>((vocab + seq) * h));
    EXPECT_EQ(c.output_head, 0.0);
    EXPECT_EQ(c.attention_per_layer, static_cast<double>(4 * h * h + 4 * h));
    EXPECT_EQ(c.dense_mlp_per_layer, static_cast<double>(8 * h * h + 5 * h));
    EXPECT_EQ(c.norms_per_layer, static_cast<double>(4 * h));
    EXPECT_EQ(c.active(), c.total());
  }
}

TEST(ParameterCount, GptGemmWeightsAreTwelveHSquared) {
  const ModelSpec m = gpt(24, 2304, 24, 51200, 2048);
  const auto w = dense_layer_gemm_weights(m);
  EXPECT_EQ(w.attention, 4.0 * 2304 * 2304);
  EXPECT_EQ(w.mlp, 8.0 * 2304 * 2304);
}

TEST(ParameterCount, UntiedHeadAndNoPositionsForRope) {
  ModelSpec m = gpt(2, 64, 4, 1000, 128);
  m.tied_embeddings = false;
  m.position = PositionEmbedding::rope;
  const auto c = count_parameters(m);
  EXPECT_EQ(c.embedding, 1000.0 * 64);
  EXPECT_EQ(c.output_head, 1000.0 * 64);
}

TEST(ParameterCount, EmbeddingNormForBloom) {
  ModelSpec m = gpt(2, 64, 4, 1000, 128);
  m.position = PositionEmbedding::alibi;
  m.embedding_norm = true;
  EXPECT_EQ(count_parameters(m).embedding, 1000.0 * 64 + 2 * 64);
}

// Llama-3-8B shape (HF meta-llama/Meta-Llama-3-8B config.json) summed by hand; the released
// weights hold exactly 8,030,261,248 parameters.
TEST(ParameterCount, SwigluGqaNoBiasHandSum) {
  const ModelSpec m = llama(32, 4096, 14336, 32, 8, 128256);
  m.validate();
  const i64 h = 4096;
  const i64 q = h * 4096;             // 32 heads x 128
  const i64 kv = h * 1024;            // 8 KV heads x 128, each of K and V
  const i64 o = 4096 * h;
  const i64 mlp = 3 * h * 14336;      // gate, up, down
  const i64 norms = 2 * h;            // RMSNorm: weight only
  const i64 layer = q + 2 * kv + o + mlp + norms;
  const i64 total = 32 * layer + 128256 * h /*embedding*/ + 128256 * h /*head*/ + h /*norm*/;
  const auto c = count_parameters(m);
  EXPECT_EQ(c.attention_per_layer, static_cast<double>(q + 2 * kv + o));
  EXPECT_EQ(c.dense_mlp_per_layer, static_cast<double>(mlp));
  EXPECT_EQ(c.norms_per_layer, static_cast<double>(norms));
  EXPECT_EQ(c.total(), static_cast<double>(total));
  EXPECT_EQ(c.total(), 8'030'261'248.0);
}

// Qwen2: biases on Q, K and V only.
TEST(ParameterCount, QkvBiasAddsQAndKvWidths) {
  ModelSpec m = llama(2, 3584, 18944, 28, 4, 1000);
  const double without = count_parameters(m).attention_per_layer;
  m.qkv_bias = true;
  EXPECT_EQ(count_parameters(m).attention_per_layer - without, 3584.0 + 2 * 4 * 128);
}

// Squared-ReLU MLP (Nemotron-4) has two matrices, like GELU.
TEST(ParameterCount, Relu2HasTwoMatrices) {
  ModelSpec m = llama(2, 256, 1024, 4, 2, 1000);
  m.mlp = MlpType::relu2;
  EXPECT_EQ(count_parameters(m).dense_mlp_per_layer, 2.0 * 256 * 1024);
}

// Mixtral-8x7B shape: every layer MoE, 8 experts, top-2, no shared experts.
TEST(ParameterCount, MoeTotalVersusActive) {
  ModelSpec m = llama(32, 4096, 0, 32, 8, 32000);
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.expert_ffn_hidden = 14336;
  m.validate();
  const auto c = count_parameters(m);
  const double expert = 3.0 * 4096 * 14336;
  const double router = 4096.0 * 8;
  EXPECT_EQ(c.moe_layers, 32.0);
  EXPECT_EQ(c.dense_layers, 0.0);
  EXPECT_EQ(c.moe_mlp_per_layer, router + 8 * expert);
  EXPECT_EQ(c.moe_active_mlp_per_layer, router + 2 * expert);
  EXPECT_EQ(c.total() - c.active(), 32 * 6 * expert);
  // Released weights: 46,702,792,704 total; 12,879,925,248 per token.
  EXPECT_EQ(c.total(), 46'702'792'704.0);
  EXPECT_EQ(c.active(), 12'879'925'248.0);
  const auto w = moe_layer_gemm_weights(m);
  EXPECT_EQ(w.mlp, router + 2 * expert);
}

// DeepSeek-V3 (HF deepseek-ai/DeepSeek-V3 config.json), main model without the MTP module:
// MLA attention with its two latent norms, 3 dense layers, 256 routed experts top-8, 1 shared
// expert, a router with a bias (e_score_correction_bias).
TEST(ParameterCount, DeepSeekV3HandSum) {
  ModelSpec m = llama(61, 7168, 18432, 128, 128, 129280);
  m.attention = AttentionKind::mla;
  m.head_dim = 128;
  m.mla = {1536, 512, 128, 64, 128};
  m.moe.experts = 256;
  m.moe.top_k = 8;
  m.moe.expert_ffn_hidden = 2048;
  m.moe.shared_experts = 1;
  m.moe.dense_layers = 3;
  m.moe.router_bias = true;
  m.validate();
  const i64 h = 7168;
  const i64 q = h * 1536 + 1536 * 128 * (128 + 64);   // W_dq, W_uq
  const i64 kv = h * (512 + 64) + 512 * 128 * (128 + 128);  // W_dkv (+ k_rope), W_ukv
  const i64 o = 128 * 128 * h;
  const i64 latent_norms = 1536 + 512;
  const i64 attention = q + kv + o + latent_norms;
  const i64 expert = 3 * h * 2048;
  const i64 router = h * 256 + 256;
  const i64 moe_mlp = router + 257 * expert;
  const i64 dense_mlp = 3 * h * 18432;
  const i64 norms = 2 * h;
  const i64 total = 3 * (attention + norms + dense_mlp) + 58 * (attention + norms + moe_mlp) +
                    2 * 129280 * h + h;
  const auto c = count_parameters(m);
  EXPECT_EQ(c.attention_per_layer, static_cast<double>(attention));
  EXPECT_EQ(c.dense_layers, 3.0);
  EXPECT_EQ(c.moe_layers, 58.0);
  EXPECT_EQ(c.total(), static_cast<double>(total));
  EXPECT_EQ(c.total(), 671'026'419'200.0);
  EXPECT_EQ(c.total() - c.active(), 58.0 * (256 - 8) * expert);
}

// gpt-oss-120b (HF openai/gpt-oss-120b config.json and model card Table 1): biases on Q, K, V, O
// and on both expert projections, a router bias, one sink logit per head.
TEST(ParameterCount, GptOssBiasesAndSinks) {
  ModelSpec m = llama(36, 2880, 0, 64, 8, 201088);
  m.head_dim = 64;
  m.attention = AttentionKind::gqa_swa;
  m.sliding_window = 128;
  m.linear_bias = true;
  m.attention_sinks = true;
  m.moe.experts = 128;
  m.moe.top_k = 4;
  m.moe.expert_ffn_hidden = 2880;
  m.moe.router_bias = true;
  m.validate();
  const i64 h = 2880;
  const i64 attention = h * 4096 + 4096 + 2 * (h * 512 + 512) + 4096 * h + h + 64;
  const i64 expert = h * 2 * 2880 + 2 * 2880 + 2880 * h + h;  // gate_up and down, with biases
  const i64 router = h * 128 + 128;
  const i64 layer = attention + 2 * h + router + 128 * expert;
  const i64 total = 36 * layer + 2 * 201088 * h + h;
  const auto c = count_parameters(m);
  EXPECT_EQ(c.attention_per_layer, static_cast<double>(attention));
  EXPECT_EQ(c.moe_mlp_per_layer, static_cast<double>(router + 128 * expert));
  EXPECT_EQ(c.total(), static_cast<double>(total));
  EXPECT_EQ(c.total(), 116'829'156'672.0);  // model card: 116.83B
  // Model card Table 1: 5.13B active, "Unembedding parameters are counted towards active, but
  // not embeddings" (the total above does include the embedding table).
  EXPECT_NEAR(c.active_without_embedding(), 5.13e9, 0.005e9);
  EXPECT_EQ(c.active() - c.active_without_embedding(), 201088.0 * h);
}

// Qwen3: RMSNorm(head_dim) on the query and on the key, one weight vector each shared by all
// heads (transformers Qwen3Attention q_norm, k_norm). Qwen3-8B (HF Qwen/Qwen3-8B config.json):
// the model card's "Number of Parameters (Non-Embedding): 6.95B" and 8.2B in all.
TEST(ParameterCount, QkNormAddsTwoHeadDims) {
  ModelSpec m = llama(36, 4096, 12288, 32, 8, 151936);
  m.head_dim = 128;
  const double without = count_parameters(m).attention_per_layer;
  m.qk_norm = true;
  m.validate();
  const auto c = count_parameters(m);
  EXPECT_EQ(c.attention_per_layer - without, 2.0 * 128);
  EXPECT_EQ(c.norms_per_layer, 2.0 * 4096);  // the block norms are unchanged
  const double embedding_and_head = 2.0 * 151936 * 4096;
  EXPECT_NEAR((c.total() - embedding_and_head) / 1e9, 6.95, 0.005);
  EXPECT_NEAR(c.total() / 1e9, 8.2, 0.05);
}

// Llama 4 Maverick's pattern: after no leading dense layer, every second layer is MoE, the
// others are dense MLPs of ffn_hidden; totals follow ModelSpec's layer counts.
TEST(ParameterCount, LayerFreqSplitsDenseAndMoeLayers) {
  ModelSpec m = llama(48, 5120, 16384, 40, 8, 202048);
  m.moe.experts = 128;
  m.moe.top_k = 1;
  m.moe.expert_ffn_hidden = 8192;
  m.moe.shared_experts = 1;
  m.moe.layer_freq = 2;
  m.validate();
  const auto c = count_parameters(m);
  EXPECT_EQ(c.moe_layers, 24.0);
  EXPECT_EQ(c.dense_layers, 24.0);
  const double h = 5120;
  const double attention = h * 5120 + 2 * h * 1024 + 5120 * h;
  const double dense_mlp = 3 * h * 16384;
  const double expert = 3 * h * 8192;
  const double router = h * 128;
  const double total = 24 * (attention + 2 * h + dense_mlp) +
                       24 * (attention + 2 * h + router + 129 * expert) + 2 * 202048 * h + h;
  EXPECT_EQ(c.total(), total);
  EXPECT_EQ(c.total() - c.active(), 24 * 127 * expert);
}

// DeepSeek-V3 shape of DeepSeekV3HandSum plus its one MTP module (DeepSeek-V3 §2.2, Fig. 3):
// enorm, hnorm, eh_proj (2h -> h), one MoE layer like layer 60, and the final norm of its shared
// head; the embedding and the output head are the main model's.
ModelSpec deepseek_v3_with_mtp() {
  ModelSpec m = llama(61, 7168, 18432, 128, 128, 129280);
  m.attention = AttentionKind::mla;
  m.head_dim = 128;
  m.mla = {1536, 512, 128, 64, 128};
  m.moe.experts = 256;
  m.moe.top_k = 8;
  m.moe.expert_ffn_hidden = 2048;
  m.moe.shared_experts = 1;
  m.moe.dense_layers = 3;
  m.moe.router_bias = true;
  m.moe.scoring = RouterScoring::sigmoid;
  m.mtp_layers = 1;
  m.validate();
  return m;
}

TEST(ParameterCount, MtpModuleIsItsOwnField) {
  const ModelSpec m = deepseek_v3_with_mtp();
  const auto c = count_parameters(m);
  const double h = 7168;
  const double eh_proj = 2 * h * h;
  const double wrapper_norms = 3 * h;
  const double layer = c.attention_per_layer + c.norms_per_layer + c.moe_mlp_per_layer;
  const double layer_active = c.attention_per_layer + c.norms_per_layer + c.moe_active_mlp_per_layer;
  EXPECT_EQ(c.mtp, eh_proj + wrapper_norms + layer);
  EXPECT_EQ(c.mtp_active, eh_proj + wrapper_norms + layer_active);
  // total() and active() hold the module; main_total() / main_active() leave it out.
  EXPECT_EQ(c.main_total(), 671'026'419'200.0);  // DeepSeekV3HandSum
  EXPECT_EQ(c.total(), c.main_total() + c.mtp);
  EXPECT_EQ(c.active(), c.main_active() + c.mtp_active);
  // Two modules: twice the work, nothing else changes.
  ModelSpec two = m;
  two.mtp_layers = 2;
  EXPECT_EQ(count_parameters(two).mtp, 2 * c.mtp);
  EXPECT_EQ(count_parameters(two).main_total(), c.main_total());
}

// DeepSeek-V3 README_WEIGHTS.md (github.com/deepseek-ai/DeepSeek-V3): the MTP module has
// "11.5B unique parameters (excluding the shared 0.9B Embedding and 0.9B output Head)" and
// "Activation parameters: 1.5B (including 0.9B for the output Head)". Both figures match once
// eh_proj (2 x 7168 x 7168 = 0.103B, present in the checkpoint as model.layers.61.eh_proj) is
// left out as the README does; with it they are 11.6B and 1.6B. Printed to 0.1B: +-0.05B.
TEST(ParameterCount, DeepSeekV3MtpMatchesReadmeWeights) {
  const auto c = count_parameters(deepseek_v3_with_mtp());
  const double eh_proj = 2.0 * 7168 * 7168;
  const double head = 129280.0 * 7168;
  constexpr double kHalfDigit = 0.05e9;
  EXPECT_NEAR(c.mtp - eh_proj, 11.5e9, kHalfDigit);
  EXPECT_NEAR(c.mtp_active - eh_proj + head, 1.5e9, kHalfDigit);
  EXPECT_NEAR(c.mtp + head, 12.5e9, 0.1e9);  // what the checkpoint adds, less its embedding copy
}

// The router's expert bias (DeepSeek-V3 e_score_correction_bias, gpt-oss router bias): one per
// expert per MoE layer, active for every token.
TEST(ParameterCount, RouterBiasIsOnePerExpert) {
  ModelSpec m = deepseek_v3_with_mtp();
  const auto with_bias = count_parameters(m);
  m.moe.router_bias = false;
  const auto without = count_parameters(m);
  EXPECT_EQ(with_bias.moe_mlp_per_layer - without.moe_mlp_per_layer, 256.0);
  EXPECT_EQ(with_bias.moe_active_mlp_per_layer - without.moe_active_mlp_per_layer, 256.0);
  EXPECT_EQ(with_bias.total() - without.total(), (58.0 + 1.0) * 256);  // 58 MoE layers + MTP
}

// active_without_embedding(): the input table leaves, the LM head's matrix stays, whether it is a
// separate output head or tied to the embedding.
TEST(ParameterCount, ActiveWithoutEmbeddingKeepsTheUnembedding) {
  ModelSpec untied = llama(2, 256, 1024, 4, 2, 1000);
  untied.validate();
  const auto u = count_parameters(untied);
  EXPECT_EQ(u.unembedding, 1000.0 * 256);
  EXPECT_EQ(u.active_without_embedding(), u.active() - 1000.0 * 256);
  ModelSpec tied = untied;
  tied.tied_embeddings = true;
  const auto t = count_parameters(tied);
  EXPECT_EQ(t.output_head, 0.0);
  EXPECT_EQ(t.active_without_embedding(), t.active());  // the one matrix is the unembedding
  // Learned positions are embedding parameters too.
  const ModelSpec g = gpt(2, 64, 4, 1000, 128);
  const auto gc = count_parameters(g);
  EXPECT_EQ(gc.active_without_embedding(), gc.active() - 128.0 * 64);
}

}  // namespace
}  // namespace tessera
