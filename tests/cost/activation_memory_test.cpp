// Per-layer activation memory against Korthikanti et al. 2022, "Reducing Activation Recomputation
// in Large Transformer Models" (arXiv 2205.05198), Table 2 and §4, for a GPT layer (MHA, 4h GeLU
// MLP, dropout, 16-bit activations, no fused attention). Values are bytes per layer, one
// micro-batch, one GPU.
#include "cost/activation_memory.h"

#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

namespace tessera {
namespace {

using i64 = std::int64_t;

ModelSpec gpt_layer(i64 hidden, i64 heads) {
  ModelSpec m;
  m.name = "gpt";
  m.layers = 4;
  m.hidden = hidden;
  m.ffn_hidden = 4 * hidden;
  m.heads = heads;
  m.kv_heads = heads;
  m.head_dim = hidden / heads;
  m.vocab = 51200;
  m.max_context = 2048;
  m.mlp = MlpType::gelu;
  m.attention = AttentionKind::mha;
  m.norm = NormType::layernorm;
  m.position = PositionEmbedding::learned;
  m.linear_bias = true;
  m.dropout = true;  // Korthikanti's accounting includes the dropout masks
  m.validate();
  return m;
}

struct Case {
  double s, b;
  i64 h, a, t;
};

// Shapes of Korthikanti Table 3 (22B, 175B, 530B, 1T) plus small ones; t divides a in each.
const Case kCases[] = {
    {2048, 1, 12288, 96, 8},   // GPT-3 175B as in the paper (s = 2048, h = 12288, a = 96, t = 8)
    {2048, 4, 6144, 64, 8},    // 22B
    {2048, 1, 20480, 128, 8},  // 530B
    {2048, 1, 25600, 160, 8},  // 1T
    {1024, 2, 4096, 32, 4},
    {512, 3, 2048, 16, 2},
    {4096, 1, 8192, 64, 1},
};

ActivationShape shape(const Case& c, i64 t, bool sp, Recompute recompute) {
  ActivationShape a;
  a.seq = c.s;
  a.micro_batch = c.b;
  a.tp = t;
  a.sequence_parallel = sp;
  a.flash_attention = false;
  a.recompute = recompute;
  return a;
}

double rel_err(double got, double want) { return std::fabs(got - want) / std::fabs(want); }

constexpr double kTol = 1e-12;

TEST(ActivationMemory, NoParallelismIs34PlusScoresTerm) {
  for (const auto& c : kCases) {
    const ModelSpec m = gpt_layer(c.h, c.a);
    const double s = c.s, b = c.b, h = double(c.h), a = double(c.a);
    const double want = s * b * h * (34.0 + 5.0 * a * s / h);
    const double got = layer_activation_bytes(m, shape(c, 1, false, Recompute::none), false);
    EXPECT_LT(rel_err(got, want), kTol) << "h=" << c.h << " got " << got << " want " << want;
  }
}

TEST(ActivationMemory, TensorParallelSplitsOnly24AndScores) {
  for (const auto& c : kCases) {
    const ModelSpec m = gpt_layer(c.h, c.a);
    const double s = c.s, b = c.b, h = double(c.h), a = double(c.a), t = double(c.t);
    const double want = s * b * h * (10.0 + 24.0 / t + 5.0 * a * s / (h * t));
    const double got = layer_activation_bytes(m, shape(c, c.t, false, Recompute::none), false);
    EXPECT_LT(rel_err(got, want), kTol) << "h=" << c.h << " t=" << c.t;
  }
}

TEST(ActivationMemory, TensorPlusSequenceParallelSplitsEverything) {
  for (const auto& c : kCases) {
    if (c.t == 1) continue;  // sequence parallelism needs tp > 1
    const ModelSpec m = gpt_layer(c.h, c.a);
    const double s = c.s, b = c.b, h = double(c.h), a = double(c.a), t = double(c.t);
    const double want = s * b * h / t * (34.0 + 5.0 * a * s / h);
    const double got = layer_activation_bytes(m, shape(c, c.t, true, Recompute::none), false);
    EXPECT_LT(rel_err(got, want), kTol) << "h=" << c.h << " t=" << c.t;
  }
}

TEST(ActivationMemory, SelectiveRecomputeWithSequenceParallelIs34Sbh_t) {
  for (const auto& c : kCases) {
    if (c.t == 1) continue;
    const ModelSpec m = gpt_layer(c.h, c.a);
    const double s = c.s, b = c.b, h = double(c.h), t = double(c.t);
    const double want = 34.0 * s * b * h / t;
    const double got = layer_activation_bytes(m, shape(c, c.t, true, Recompute::selective), false);
    EXPECT_LT(rel_err(got, want), kTol) << "h=" << c.h << " t=" << c.t;
  }
}

TEST(ActivationMemory, SelectiveRecomputeWithoutSequenceParallel) {
  for (const auto& c : kCases) {
    const ModelSpec m = gpt_layer(c.h, c.a);
    const double s = c.s, b = c.b, h = double(c.h), t = double(c.t);
    const double want = s * b * h * (10.0 + 24.0 / t);
    const double got = layer_activation_bytes(m, shape(c, c.t, false, Recompute::selective), false);
    EXPECT_LT(rel_err(got, want), kTol) << "h=" << c.h << " t=" << c.t;
  }
}

TEST(ActivationMemory, FullRecomputeKeepsOnlyTheLayerInput) {
  for (const auto& c : kCases) {
    const ModelSpec m = gpt_layer(c.h, c.a);
    const double s = c.s, b = c.b, h = double(c.h), t = double(c.t);
    EXPECT_LT(rel_err(layer_activation_bytes(m, shape(c, c.t, false, Recompute::full), false),
                      2.0 * s * b * h), kTol);
    if (c.t > 1) {
      EXPECT_LT(rel_err(layer_activation_bytes(m, shape(c, c.t, true, Recompute::full), false),
                        2.0 * s * b * h / t), kTol);
    }
  }
}

// The paper's own GPT-3 175B numbers (§4, t = 8, s = 2048, h = 12288, a = 96, b = 1):
// 5as/h = 80, so the attention scores are 80 / (34 + 80) = 70% of a layer without parallelism,
// and selective recompute + SP keeps 34/(34 + 80) of the TP+SP memory.
TEST(ActivationMemory, Gpt3ScoresDominateWithoutFlash) {
  const Case c{2048, 1, 12288, 96, 8};
  const ModelSpec m = gpt_layer(c.h, c.a);
  const double none = layer_activation_bytes(m, shape(c, 1, false, Recompute::none), false);
  const double sp = layer_activation_bytes(m, shape(c, 8, true, Recompute::none), false);
  const double sel = layer_activation_bytes(m, shape(c, 8, true, Recompute::selective), false);
  EXPECT_LT(rel_err(none, 2048.0 * 12288.0 * 114.0), kTol);
  EXPECT_LT(rel_err(sel / sp, 34.0 / 114.0), kTol);
  EXPECT_LT(rel_err(none / sp, 8.0), kTol);
}

TEST(ActivationMemory, LinearInMicroBatch) {
  const ModelSpec m = gpt_layer(4096, 32);
  for (Recompute r : {Recompute::none, Recompute::selective, Recompute::full}) {
    const Case one{2048, 1, 4096, 32, 4};
    const Case five{2048, 5, 4096, 32, 4};
    const double a1 = layer_activation_bytes(m, shape(one, 4, true, r), false);
    const double a5 = layer_activation_bytes(m, shape(five, 4, true, r), false);
    EXPECT_LT(rel_err(a5, 5.0 * a1), kTol) << to_string(r);
  }
}

// Fused (flash) attention stores no s x s scores, only the fp32 log-sum-exp per query and head
// (Dao 2023, FlashAttention-2 §3.1): the selective layout plus 4 bytes * s * b * a / t.
TEST(ActivationMemory, FlashAttentionKeepsOnlySoftmaxStatistics) {
  for (const auto& c : kCases) {
    const ModelSpec m = gpt_layer(c.h, c.a);
    ActivationShape flash = shape(c, c.t, c.t > 1, Recompute::none);
    flash.flash_attention = true;
    const double sel = layer_activation_bytes(m, shape(c, c.t, c.t > 1, Recompute::selective), false);
    const double got = layer_activation_bytes(m, flash, false);
    const double lse = 4.0 * c.s * c.b * double(c.a) / double(c.t);
    EXPECT_LT(rel_err(got, sel + lse), kTol) << "h=" << c.h;
    EXPECT_LT(got, layer_activation_bytes(m, shape(c, c.t, c.t > 1, Recompute::none), false));
  }
}

// Generalisations the header documents, term by term against the GPT layout:
// GQA shrinks K and V to g heads (2 bytes each per element), a gated MLP stores gate and up
// (2f) plus the activation output (f) instead of 2 x f.
TEST(ActivationMemory, GqaAndSwigluChangeOnlyTheirOwnTerms) {
  const Case c{4096, 2, 8192, 64, 8};
  const double s = c.s, b = c.b, t = 8;
  ModelSpec mha = gpt_layer(c.h, c.a);
  ModelSpec gqa = mha;
  gqa.kv_heads = 8;
  gqa.attention = AttentionKind::gqa;
  const double d = double(mha.head_dim);
  const double kv_saving = 2.0 /*K and V*/ * 2.0 /*bytes*/ * double(64 - 8) * d * s * b / t;
  for (Recompute r : {Recompute::none, Recompute::selective}) {
    const double a = layer_activation_bytes(mha, shape(c, 8, true, r), false);
    const double g = layer_activation_bytes(gqa, shape(c, 8, true, r), false);
    EXPECT_LT(rel_err(a - g, kv_saving), 1e-9) << to_string(r);
  }
  ModelSpec swiglu = mha;
  swiglu.mlp = MlpType::swiglu;
  swiglu.ffn_hidden = 3 * c.h;
  const double f_gelu = double(mha.ffn_hidden), f_swi = double(swiglu.ffn_hidden);
  // gelu: 2 bytes * (f + f); swiglu: 2 bytes * (2f + f).
  const double delta = (2.0 * 3.0 * f_swi - 2.0 * 2.0 * f_gelu) * s * b / t;
  const double g0 = layer_activation_bytes(mha, shape(c, 8, true, Recompute::selective), false);
  const double g1 = layer_activation_bytes(swiglu, shape(c, 8, true, Recompute::selective), false);
  EXPECT_LT(rel_err(g1 - g0, delta), 1e-9);
}

// An MoE layer stores the MLP activations of each of the top_k (+ shared) experts a token visits.
TEST(ActivationMemory, MoeMlpTermScalesWithExpertsPerToken) {
  ModelSpec m = gpt_layer(4096, 32);
  m.mlp = MlpType::swiglu;
  m.ffn_hidden = 0;
  m.moe.experts = 8;
  m.moe.expert_ffn_hidden = 14336;
  const Case c{4096, 1, 4096, 32, 4};
  m.moe.top_k = 1;
  const double k1 = layer_activation_bytes(m, shape(c, 4, true, Recompute::selective), true);
  m.moe.top_k = 2;
  const double k2 = layer_activation_bytes(m, shape(c, 4, true, Recompute::selective), true);
  m.moe.top_k = 4;
  const double k4 = layer_activation_bytes(m, shape(c, 4, true, Recompute::selective), true);
  const double one_expert = 2.0 * 3.0 * 14336.0 * c.s * c.b / 4.0;
  EXPECT_LT(rel_err(k2 - k1, one_expert), 1e-9);
  EXPECT_LT(rel_err(k4 - k2, 2.0 * one_expert), 1e-9);
}

}  // namespace
}  // namespace tessera
