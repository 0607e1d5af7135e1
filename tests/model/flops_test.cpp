// forward_flops_per_token and iteration_flops against hand calculations: MLA projections and
// attention widths, MoE layer patterns, MTP modules (Megatron-Core's count), and no allocation.
#include "model/flops.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>

#include <gtest/gtest.h>

#include "model/parameter_count.h"

// Counts global allocations so that a test can assert that a call makes none. Every
// non-aligned form is replaced, so that each allocation and its release both go through
// malloc/free (also under ASan).
namespace {
std::atomic<std::int64_t> g_allocations{0};
void* counted_malloc(std::size_t size) noexcept {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
void* counted_or_throw(std::size_t size) {
  if (void* p = counted_malloc(size)) return p;
  throw std::bad_alloc();
}
}  // namespace

// GCC's -Wmismatched-new-delete cannot see that the replacement new is malloc (sanitizer build, -O1).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t size) { return counted_or_throw(size); }
void* operator new[](std::size_t size) { return counted_or_throw(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return counted_malloc(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return counted_malloc(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace tessera {
namespace {

constexpr std::int64_t kSeq = 4096;

// DeepSeek-V3 (HF deepseek-ai/DeepSeek-V3 config.json): h 7168, 128 heads, q_lora 1536,
// kv_lora 512, nope 128, rope 64, v 128; 3 dense layers (18432), then 58 MoE layers with 256
// experts top-8 of 2048 and 1 shared expert; vocab 129280; one MTP module.
ModelSpec deepseek_v3() {
  ModelSpec m;
  m.name = "deepseek-v3";
  m.layers = 61;
  m.hidden = 7168;
  m.ffn_hidden = 18432;
  m.heads = 128;
  m.kv_heads = 128;
  m.head_dim = 128;
  m.vocab = 129280;
  m.max_context = 163840;
  m.mlp = MlpType::swiglu;
  m.attention = AttentionKind::mla;
  m.norm = NormType::rmsnorm;
  m.position = PositionEmbedding::rope;
  m.tied_embeddings = false;
  m.mla = {1536, 512, 128, 64, 128};
  m.moe.experts = 256;
  m.moe.top_k = 8;
  m.moe.expert_ffn_hidden = 2048;
  m.moe.shared_experts = 1;
  m.moe.dense_layers = 3;
  m.moe.router_bias = true;
  m.moe.scoring = RouterScoring::sigmoid;
  m.moe.groups = 8;
  m.moe.topk_groups = 4;
  m.mtp_layers = 1;
  m.validate();
  return m;
}

// The MLA projections one token passes through (DeepSeek-V3 §2.1.1, eqs. 1-11), as MACs:
//   c_q = W_DQ h: 7168 -> 1536;    q = W_UQ c_q: 1536 -> 128 x (128 + 64)
//   [c_kv, k_rope] = W_DKV h: 7168 -> 512 + 64;    [k_nope, v] = W_UKV c_kv: 512 -> 128 x (128 + 128)
//   o = W_O [v]: 128 x 128 -> 7168
constexpr double kMlaMacs = 7168.0 * 1536 + 1536.0 * 128 * (128 + 64) + 7168.0 * (512 + 64) +
                            512.0 * 128 * (128 + 128) + 128.0 * 128 * 7168;
// Scores use q.k over nope + rope = 192 per head, values v_head_dim = 128 per head: MACs per key.
constexpr double kMlaCoreMacsPerKey = 128.0 * (192 + 128);
constexpr double kDenseMlpMacs = 3.0 * 7168 * 18432;
constexpr double kMoeMlpMacs = 7168.0 * 256 + (8 + 1) * 3.0 * 7168 * 2048;  // router + 9 experts
constexpr double kLogitMacs = 129280.0 * 7168;

TEST(Flops, MlaPerTokenByHand) {
  const auto f = forward_flops_per_token(deepseek_v3(), kSeq, /*causal_span=*/false);
  EXPECT_DOUBLE_EQ(f.attention_linear, 2.0 * 61 * kMlaMacs);
  EXPECT_DOUBLE_EQ(f.attention_core, 2.0 * 61 * kMlaCoreMacsPerKey * kSeq);
  EXPECT_DOUBLE_EQ(f.mlp, 2.0 * (3 * kDenseMlpMacs + 58 * kMoeMlpMacs));
  EXPECT_DOUBLE_EQ(f.logits, 2.0 * kLogitMacs);
  // The causal span: query i sees i keys, (s + 1) / 2 on average.
  const auto causal = forward_flops_per_token(deepseek_v3(), kSeq, /*causal_span=*/true);
  EXPECT_DOUBLE_EQ(causal.attention_core, 2.0 * 61 * kMlaCoreMacsPerKey * (kSeq + 1) / 2.0);
  EXPECT_DOUBLE_EQ(causal.attention_linear, f.attention_linear);
}

// Megatron-Core's MLA term (num_floating_point_operations, megatron/training/training.py at
// d98e8a64) per token and layer, forward: 2 x [q_lora (h + a (qk + rope) + 1) + kv_lora (h +
// a (qk + v) + 1) + h rope + a v h]. Its "+ 1"s are the two latent norms' weights, which our GEMM
// count leaves out; everything else is the same.
TEST(Flops, MlaLinearEqualsMegatronLessLatentNorms) {
  const double h = 7168, a = 128, qk = 128, rope = 64, v = 128, q_lora = 1536, kv_lora = 512;
  const double megatron = 2.0 * (q_lora * (h + a * (qk + rope) + 1) +
                                 kv_lora * (h + a * (qk + v) + 1) + h * rope + a * v * h);
  const auto f = forward_flops_per_token(deepseek_v3(), kSeq, false);
  EXPECT_DOUBLE_EQ(f.attention_linear / 61, megatron - 2.0 * (q_lora + kv_lora));
}

// One MTP module (DeepSeek-V3 §2.2), as Megatron-Core counts it (training.py at d98e8a64): one
// more layer of the last layer's kind (layer 60 is MoE), "3 * hidden" norm weights and the
// "2 * hidden * hidden" projection, and one more logit GEMM; its attention sees the whole span.
TEST(Flops, MtpModuleByHand) {
  const ModelSpec m = deepseek_v3();
  const auto f = forward_flops_per_token(m, kSeq, false);
  const double h = 7168;
  const double layer = 2.0 * (kMlaMacs + kMoeMlpMacs) + 2.0 * kMlaCoreMacsPerKey * kSeq;
  EXPECT_DOUBLE_EQ(f.mtp_blocks, layer + 2.0 * (3 * h + 2 * h * h));
  EXPECT_DOUBLE_EQ(f.mtp_logits, 2.0 * kLogitMacs);
  EXPECT_DOUBLE_EQ(f.total(), f.layers() + f.logits + f.mtp_blocks + f.mtp_logits);
  // The main-model fields do not see the module: per-layer callers divide them by `layers`.
  ModelSpec without = m;
  without.mtp_layers = 0;
  const auto g = forward_flops_per_token(without, kSeq, false);
  EXPECT_DOUBLE_EQ(g.layers(), f.layers());
  EXPECT_DOUBLE_EQ(g.mtp(), 0.0);
  // Two modules, twice the MTP work.
  ModelSpec two = m;
  two.mtp_layers = 2;
  EXPECT_DOUBLE_EQ(forward_flops_per_token(two, kSeq, false).mtp(), 2.0 * f.mtp());
  // Causal span: the module's attention core is counted causally too.
  const auto c = forward_flops_per_token(m, kSeq, true);
  EXPECT_DOUBLE_EQ(f.mtp_blocks - c.mtp_blocks,
                   2.0 * kMlaCoreMacsPerKey * (kSeq - (kSeq + 1) / 2.0));
}

// When the last main layer is dense, so is each MTP module's layer.
TEST(Flops, MtpLayerFollowsTheLastLayerKind) {
  ModelSpec m = deepseek_v3();
  m.moe.dense_layers = 0;
  m.moe.layer_freq = 2;   // MoE layers 1, 3, ..., 59; layer 60 is dense
  m.validate();
  ASSERT_FALSE(m.is_moe_layer(60));
  const auto f = forward_flops_per_token(m, kSeq, false);
  const double h = 7168;
  const double layer = 2.0 * (kMlaMacs + kDenseMlpMacs) + 2.0 * kMlaCoreMacsPerKey * kSeq;
  EXPECT_DOUBLE_EQ(f.mtp_blocks, layer + 2.0 * (3 * h + 2 * h * h));
  EXPECT_DOUBLE_EQ(f.mlp, 2.0 * (31 * kDenseMlpMacs + 30 * kMoeMlpMacs));
}

// Llama 4 Maverick (HF config.json text_config): 24 dense layers of 16384 and 24 MoE layers with
// a 128-way router, top-1 of 8192 and one shared expert of 8192.
TEST(Flops, LayerFreqCountsEachKindOnce) {
  ModelSpec m;
  m.name = "maverick";
  m.layers = 48;
  m.hidden = 5120;
  m.ffn_hidden = 16384;
  m.heads = 40;
  m.kv_heads = 8;
  m.head_dim = 128;
  m.vocab = 202048;
  m.max_context = 1048576;
  m.mlp = MlpType::swiglu;
  m.attention = AttentionKind::gqa;
  m.norm = NormType::rmsnorm;
  m.position = PositionEmbedding::rope;
  m.tied_embeddings = false;
  m.moe = {128, 1, 8192, 1, 0, 2, false, RouterScoring::sigmoid, 0, 0};
  m.validate();
  const double h = 5120;
  const auto f = forward_flops_per_token(m, kSeq, false);
  EXPECT_DOUBLE_EQ(f.mlp, 2.0 * (24 * 3 * h * 16384 + 24 * (h * 128 + 2 * 3 * h * 8192)));
  EXPECT_DOUBLE_EQ(f.attention_linear, 2.0 * 48 * (h * 5120 + 2 * h * 1024 + 5120 * h));
  EXPECT_DOUBLE_EQ(f.attention_core, 2.0 * 48 * 40 * (128 + 128) * kSeq);
}

TEST(Flops, IterationCountsMtpInModelFlopsButNotInRecompute) {
  const ModelSpec m = deepseek_v3();
  const double tokens = 1024.0 * kSeq;
  const auto f = forward_flops_per_token(m, kSeq, false);
  const auto none = iteration_flops(m, tokens, kSeq, Recompute::none);
  EXPECT_DOUBLE_EQ(none.model(), 3.0 * tokens * f.total());
  EXPECT_DOUBLE_EQ(iteration_flops(m, tokens, kSeq, Recompute::full).recompute, tokens * f.layers());
  EXPECT_DOUBLE_EQ(iteration_flops(m, tokens, kSeq, Recompute::selective).recompute,
                   tokens * f.attention_core);
}

// The planner calls these millions of times: they must not allocate.
TEST(Flops, AllocationFree) {
  const ModelSpec m = deepseek_v3();
  double sink = 0;
  const std::int64_t before = g_allocations.load();
  for (int i = 0; i < 100; ++i) {
    sink += forward_flops_per_token(m, kSeq + i, i % 2 == 0).total();
    sink += iteration_flops(m, 1e6, kSeq, Recompute::full).hardware();
    sink += count_parameters(m).active();
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
  EXPECT_GT(sink, 0.0);
}

}  // namespace
}  // namespace tessera
