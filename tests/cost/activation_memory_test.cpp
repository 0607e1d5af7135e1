// Per-layer activation memory against Korthikanti et al. 2022, "Reducing Activation Recomputation
// in Large Transformer Models" (arXiv 2205.05198), Table 2 and §4, for a GPT layer (MHA, 4h GeLU
// MLP, dropout, 16-bit activations, no fused attention). Values are bytes per layer, one
// micro-batch, one GPU.
#include "cost/activation_memory.h"

#include <cmath>
#include <cstdint>

#include <gtest/gtest.h>

#include "common/relative_error.h"

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

using testing::rel_err;

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

// A small MoE layer by hand (Megatron-Core d98e8a64, moe/router.py and moe/experts.py): h = 1024,
// 8 experts of f = 512 (SwiGLU), top-2, one shared expert, s = 4096, tp = 2 with sequence
// parallelism, etp = 1, load factor 1.2. What the MoE layer keeps beyond its input (the
// difference to recompute_modules = moe):
//   router   (s / tp) x E x (4 fp32 score + 1 routing-map byte)
//   routed   (s / tp) x etp x k x 1.2 token copies, each: fc1 input 2h, fc1 output 2 x 2f,
//            activation output 2f, its fp32 probability
//   shared   s x (2 x 2f + 2f) / tp
ModelSpec small_moe() {
  ModelSpec m = gpt_layer(1024, 8);
  m.mlp = MlpType::swiglu;
  m.dropout = false;
  m.ffn_hidden = 2048;
  m.moe.experts = 8;
  m.moe.top_k = 2;
  m.moe.expert_ffn_hidden = 512;
  m.moe.shared_experts = 1;
  m.validate();
  return m;
}

ActivationShape moe_shape() {
  ActivationShape a;
  a.seq = 4096;
  a.micro_batch = 1;
  a.tp = 2;
  a.sequence_parallel = true;
  a.flash_attention = true;
  a.etp = 1;
  a.expert_load = 1.2;
  return a;
}

TEST(ActivationMemory, MoeRoutedActivationsByHand) {
  const ModelSpec m = small_moe();
  ActivationShape a = moe_shape();
  const double full = layer_activation_bytes(m, a, true);
  a.recompute = Recompute::selective;
  a.recompute_modules = kRecomputeMoe;
  const double input_only = layer_activation_bytes(m, a, true);
  const double s = 4096, h = 1024, f = 512, E = 8, k = 2;
  const double router = s / 2 * E * 5.0;
  const double routed_tokens = s / 2 * 1 * k * 1.2;
  const double routed = routed_tokens * (2 * h + 2 * 2 * f + 2 * f + 4);
  const double shared = s * (2 * 2 * f + 2 * f) / 2;
  EXPECT_LT(rel_err(full - input_only, router + routed + shared), 1e-12);
  EXPECT_LT(rel_err(routed_tokens_on_rank(m, a), routed_tokens), 1e-12);
  // etp = tp = 2: each rank receives the tokens of both etp ranks at half the width.
  ActivationShape b = moe_shape();
  b.etp = 2;
  EXPECT_LT(rel_err(routed_tokens_on_rank(m, b), 2 * routed_tokens), 1e-12);
  b.recompute = Recompute::selective;
  b.recompute_modules = kRecomputeSharedExperts;
  a.recompute_modules = kRecomputeSharedExperts;
  const double per_copy_etp2 = 2 * h + 2 * 2 * f / 2 + 2 * f / 2 + 4;
  EXPECT_LT(rel_err(layer_activation_bytes(m, b, true) - layer_activation_bytes(m, a, true),
                    2 * routed_tokens * per_copy_etp2 - routed), 1e-12);
}

// top_k scales the routed part linearly: each extra expert per token adds its token copies.
TEST(ActivationMemory, MoeMlpTermScalesWithExpertsPerToken) {
  ModelSpec m = small_moe();
  const ActivationShape a = moe_shape();
  m.moe.top_k = 1;
  const double k1 = layer_activation_bytes(m, a, true);
  m.moe.top_k = 2;
  const double k2 = layer_activation_bytes(m, a, true);
  m.moe.top_k = 4;
  const double k4 = layer_activation_bytes(m, a, true);
  const double one = 4096.0 / 2 * 1.2 * (2 * 1024.0 + 3 * 2 * 512.0 + 4);
  EXPECT_LT(rel_err(k2 - k1, one), 1e-12);
  EXPECT_LT(rel_err(k4 - k2, 2 * one), 1e-12);
}

// A larger capacity factor (the padded load of every expert) never reduces memory.
TEST(ActivationMemory, LargerLoadFactorNeverReducesMemory) {
  const ModelSpec m = small_moe();
  double previous = 0;
  for (double load : {1.0, 1.1, 1.25, 1.5, 2.0, 4.0}) {
    ActivationShape a = moe_shape();
    a.expert_load = load;
    const double bytes = layer_activation_bytes(m, a, true);
    EXPECT_GT(bytes, previous) << load;
    previous = bytes;
  }
}

// MLA by hand (multi_latent_attention.py, d98e8a64), tp = 1, flash, no recompute, per token:
//   norm inputs 2 x 2h, norm outputs 2h (attention) + 2h (MLP), q latent before / after its norm
//   2 x 2 q_lora, kv latent + rope key 2 (kv_lora + rope), normed kv latent 2 kv_lora, the rope
//   key gathered 2 rope, Q and K 2 x 2 a (nope + rope), V 2 a v, output 2 a v, lse 4 a,
//   SwiGLU MLP 2 x 2f + 2f.
ModelSpec small_mla() {
  ModelSpec m = gpt_layer(256, 4);
  m.attention = AttentionKind::mla;
  m.mlp = MlpType::swiglu;
  m.dropout = false;
  m.ffn_hidden = 512;
  m.mla.q_lora_rank = 64;
  m.mla.kv_lora_rank = 32;
  m.mla.qk_nope_head_dim = 16;
  m.mla.qk_rope_head_dim = 8;
  m.mla.v_head_dim = 16;
  m.validate();
  return m;
}

TEST(ActivationMemory, MlaByHand) {
  const ModelSpec m = small_mla();
  ActivationShape a;
  a.seq = 1024;
  a.micro_batch = 2;
  a.tp = 1;
  a.flash_attention = true;
  const double h = 256, a_ = 4, ql = 64, kvl = 32, nope = 16, rope = 8, v = 16, f = 512;
  const double per_token = 2 * 2 * h + 2 * h + 2 * h + 2 * 2 * ql + 2 * (kvl + rope) + 2 * kvl + 2 * rope +
                           2 * 2 * a_ * (nope + rope) + 2 * a_ * v + 2 * a_ * v + 4 * a_ + 2 * 2 * f + 2 * f;
  EXPECT_LT(rel_err(layer_activation_bytes(m, a, false), per_token * 2048), 1e-12);
  // mla_up_proj discards the up-projected Q, K, V (the checkpoint keeps the latents).
  a.recompute = Recompute::selective;
  a.recompute_modules = kRecomputeMlaUpProj;
  EXPECT_LT(rel_err(layer_activation_bytes(m, a, false), (per_token - 2 * a_ * (2 * (nope + rope) + v)) * 2048), 1e-12);
  // With tp = 2 and sequence parallelism the per-head tensors split by heads, the latents by
  // sequence; the gathered rope key does not split.
  ActivationShape t2 = a;
  t2.recompute = Recompute::none;
  t2.tp = 2;
  t2.sequence_parallel = true;
  const double replicated = 2 * 2 * h + 2 * h + 2 * h + 2 * 2 * ql + 2 * (kvl + rope) + 2 * kvl;
  const double split = 2 * 2 * a_ * (nope + rope) + 2 * a_ * v + 2 * a_ * v + 4 * a_ + 2 * 2 * f + 2 * f;
  EXPECT_LT(rel_err(layer_activation_bytes(m, t2, false), (replicated / 2 + 2 * rope + split / 2) * 2048), 1e-12);
}

// Each Megatron recompute module never increases a layer's memory, and strictly decreases it
// where it applies (transformer_config.py, recompute_modules).
TEST(ActivationMemory, EachRecomputeModuleNeverIncreasesAndDecreasesWhereItApplies) {
  ModelSpec mla_moe = small_moe();
  mla_moe.attention = AttentionKind::mla;
  mla_moe.mla = small_mla().mla;
  mla_moe.validate();
  ModelSpec gqa = gpt_layer(1024, 8);
  gqa.attention = AttentionKind::gqa;
  gqa.kv_heads = 2;
  gqa.mlp = MlpType::swiglu;
  gqa.dropout = false;
  gqa.validate();
  const unsigned bits[] = {kRecomputeCoreAttn, kRecomputeMoeAct, kRecomputeLayernorm, kRecomputeMlaUpProj,
                           kRecomputeMlp, kRecomputeMoe, kRecomputeSharedExperts};
  for (const ModelSpec* m : {&mla_moe, &gqa}) {
    for (bool moe : {false, true}) {
      if (moe && !m->is_moe()) continue;
      for (bool fp8 : {false, true}) {
        for (unsigned base : {0u, unsigned{kRecomputeLayernorm}, unsigned{kRecomputeMoeAct | kRecomputeCoreAttn}}) {
          for (unsigned bit : bits) {
            ActivationShape a = moe_shape();
            a.fp8 = fp8;
            a.recompute = base == 0 ? Recompute::none : Recompute::selective;
            a.recompute_modules = base;
            const double without = layer_activation_bytes(*m, a, moe);
            a.recompute = Recompute::selective;
            a.recompute_modules = base | bit;
            const double with = layer_activation_bytes(*m, a, moe);
            const bool applies = (base & bit) == 0 &&
                                 (bit == kRecomputeCoreAttn ||
                                  // a norm of its own: MLA's input norm, an MoE layer's MLP norm
                                  (bit == kRecomputeLayernorm && (m->attention == AttentionKind::mla || moe)) ||
                                  (bit == kRecomputeMlaUpProj && m->attention == AttentionKind::mla) ||
                                  (bit == kRecomputeMlp && !moe) ||
                                  ((bit == kRecomputeMoe || bit == kRecomputeMoeAct || bit == kRecomputeSharedExperts) && moe));
            EXPECT_LE(with, without) << m->name << " moe=" << moe << " bit=" << bit << " base=" << base;
            if (applies) {
              EXPECT_LT(with, without) << m->name << " moe=" << moe << " bit=" << bit << " base=" << base;
            }
          }
        }
      }
    }
  }
}

// Megatron's Transformer Engine spec fuses a GQA layer's norms into the QKV and fc1 GEMMs, so
// layernorm recompute has nothing to discard there; MLA's input norm and an MoE layer's MLP norm
// are modules of their own: each drops its 16-bit output (2h per token, over tp with SP).
TEST(ActivationMemory, LayernormRecomputeOnlyReachesUnfusedNorms) {
  ModelSpec gqa = gpt_layer(1024, 8);
  gqa.attention = AttentionKind::gqa;
  gqa.kv_heads = 2;
  gqa.dropout = false;
  ActivationShape a = moe_shape();
  const double none = layer_activation_bytes(gqa, a, false);
  a.recompute = Recompute::selective;
  a.recompute_modules = kRecomputeLayernorm;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(gqa, a, false), none);
  const ModelSpec moe = small_moe();
  ActivationShape b = moe_shape();
  const double moe_none = layer_activation_bytes(moe, b, true);
  b.recompute = Recompute::selective;
  b.recompute_modules = kRecomputeLayernorm;
  EXPECT_LT(rel_err(moe_none - layer_activation_bytes(moe, b, true), 4096.0 * 2 * 1024 / 2), 1e-12);
  const ModelSpec mla = small_mla();
  ActivationShape c;
  c.seq = 1024;
  c.micro_batch = 1;
  const double mla_none = layer_activation_bytes(mla, c, false);
  c.recompute = Recompute::selective;
  c.recompute_modules = kRecomputeLayernorm;
  EXPECT_LT(rel_err(mla_none - layer_activation_bytes(mla, c, false), 1024.0 * 2 * 256), 1e-12);
}

// QK-norm keeps the pre-norm Q and K: 2 bytes x (a + g) d per token over tp.
TEST(ActivationMemory, QkNormKeepsPreNormQueryAndKey) {
  ModelSpec m = gpt_layer(1024, 8);
  m.attention = AttentionKind::gqa;
  m.kv_heads = 2;
  m.dropout = false;
  ModelSpec n = m;
  n.qk_norm = true;
  ActivationShape a = moe_shape();
  const double d = 128;
  EXPECT_LT(rel_err(layer_activation_bytes(n, a, false) - layer_activation_bytes(m, a, false),
                    4096.0 * 2 * (8 + 2) * d / 2), 1e-12);
}

// FP8 (Transformer Engine) saves GEMM inputs quantized: every recipe keeps less than 16-bit, the
// block recipes keep their scales on top of the per-tensor recipes' one byte.
TEST(ActivationMemory, Fp8SavesGemmInputsInOneBytePlusScales) {
  const ModelSpec m = small_moe();
  ActivationShape a = moe_shape();
  const double bf16 = layer_activation_bytes(m, a, true);
  a.fp8 = true;
  a.fp8_recipe = Fp8Recipe::tensorwise;
  const double tensorwise = layer_activation_bytes(m, a, true);
  a.fp8_recipe = Fp8Recipe::delayed;
  EXPECT_DOUBLE_EQ(layer_activation_bytes(m, a, true), tensorwise);
  a.fp8_recipe = Fp8Recipe::blockwise;
  const double blockwise = layer_activation_bytes(m, a, true);
  a.fp8_recipe = Fp8Recipe::mxfp8;
  const double mxfp8 = layer_activation_bytes(m, a, true);
  EXPECT_LT(tensorwise, bf16);
  EXPECT_LT(tensorwise, blockwise);
  // One fp32 scale per 128 elements and one E8M0 byte per 32 are the same 1/32 byte per element.
  EXPECT_DOUBLE_EQ(blockwise, mxfp8);
  EXPECT_LT(mxfp8, bf16);
  EXPECT_DOUBLE_EQ(saved_gemm_input_bytes(a), 1.0 + 1.0 / 32.0);
}

// torchtitan's op-level SAC on a Llama block with tp = 1 keeps, per token: the block input 2h,
// wq and wv outputs 2(q + kv), the SDPA output 2q and fp32 lse 4a, w1's output 2f, w2's output 2h.
TEST(ActivationMemory, TorchtitanOpSacKeepsEveryOtherMatmul) {
  ModelSpec m = gpt_layer(4096, 32);
  m.attention = AttentionKind::gqa;
  m.kv_heads = 8;
  m.mlp = MlpType::swiglu;
  m.ffn_hidden = 14336;
  m.dropout = false;
  ActivationShape a;
  a.seq = 8192;
  a.micro_batch = 2;
  a.tp = 1;
  a.recompute = Recompute::selective;
  a.framework = TrainingFramework::torchtitan;
  const double h = 4096, kv = 1024, f = 14336;
  const double per_token = 2 * h + 2 * (h + kv) + 2 * h + 4 * 32 + 2 * f + 2 * h;
  EXPECT_LT(rel_err(layer_activation_bytes(m, a, false), per_token * 16384), 1e-12);
  ActivationShape megatron = a;
  megatron.framework = TrainingFramework::megatron;
  EXPECT_LT(layer_activation_bytes(m, a, false), layer_activation_bytes(m, megatron, false));
}

TEST(ActivationMemory, DispatchBuffersByDispatcher) {
  const ModelSpec m = small_moe();
  const ActivationShape a = moe_shape();
  const double local = 4096.0 / 2;
  EXPECT_LT(rel_err(moe_dispatch_buffer_bytes(m, a, MoeDispatcher::alltoall, 8), local * 2 * 1.2 * 2 * 1024), 1e-12);
  EXPECT_LT(rel_err(moe_dispatch_buffer_bytes(m, a, MoeDispatcher::allgather, 8), local * 8 * (2 * 1024 + 5 * 8)), 1e-12);
  EXPECT_GT(moe_dispatch_buffer_bytes(m, a, MoeDispatcher::flex, 8), 0.0);
  EXPECT_EQ(moe_dispatch_buffer_bytes(gpt_layer(1024, 8), a, MoeDispatcher::alltoall, 8), 0.0);
}

}  // namespace
}  // namespace tessera
