// Sample costs: the GEMM term matches 2 FLOPs per weight per token (Kaplan et al. 2020, C_forward
// = 2N) at the cost model's GEMM rate, a document's time is exactly a d^2 + b d, spans add up,
// images join the first document's span, and the prediction sits below the full cost model's
// compute time for the same tokens (which adds norms, activations, the loss and kernel overheads).
#include "balance/sample_cost.h"

#include <cmath>

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "cost/compute_cost.h"
#include "cost/cost_model.h"
#include "model/parameter_count.h"

namespace tessera {
namespace {

constexpr std::int64_t kPacked = 8192;

double rel_err(double got, double want) { return std::fabs(got - want) / std::fabs(want); }

TEST(SampleCost, GemmTermIsSixFlopsPerWeightPerTokenAtTheGemmRate) {
  const ModelSpec model = builtin_model("llama3-8b");
  const GpuSpec& gpu = find_gpu("h100-sxm-80gb");
  const SpanCost cost = backbone_span_cost(model, gpu, kPacked);
  const ParameterCount params = count_parameters(model);
  // Every weight but the embedding lookup and the norms is a GEMM weight.
  const double gemm_weights = params.total() - params.embedding - params.final_norm -
                              static_cast<double>(model.layers) * params.norms_per_layer;
  const double h = static_cast<double>(model.hidden);
  const double rate = gpu.peak_flops(false) * gemm_efficiency(kPacked, h, h, gpu, false);
  EXPECT_LT(rel_err(cost.linear_s_per_token * rate, 6.0 * gemm_weights), 1e-9);
}

TEST(SampleCost, AttentionPairCostIsFourHeadWidthsPerLayerAtTheAttentionRate) {
  // Q.K^T and P.V: 2 x 2 x heads x head_dim FLOPs per query-key pair per layer, forward; the
  // fused backward adds 2.5x (FlashAttention-2 §3.1.2).
  const ModelSpec model = builtin_model("llama3-8b");
  const GpuSpec& gpu = find_gpu("h100-sxm-80gb");
  const SpanCost cost = backbone_span_cost(model, gpu, kPacked);
  const double forward = 4.0 * static_cast<double>(model.heads * model.head_dim * model.layers);
  // The packed sequence is one kernel call of all heads (its tile saturation); each document's
  // own keys per tile enter per document (attention_half_seq).
  GpuSpec long_spans = gpu;
  long_spans.attention_half_seq = 0;
  const double rate =
      gpu.peak_flops(false) * attention_efficiency({double(model.heads), double(kPacked), double(model.head_dim)}, long_spans);
  EXPECT_LT(rel_err(cost.attention_s_per_pair, 3.5 * forward / rate), 1e-12);
  EXPECT_EQ(cost.attention_half_seq, gpu.attention_half_seq);
  EXPECT_TRUE(cost.causal);
}

TEST(SampleCost, DocumentTimeIsExactlyQuadratic) {
  const SpanCost cost = backbone_span_cost(builtin_model("llama3-8b"), find_gpu("h100-sxm-80gb"), kPacked);
  // time(d) = linear d + pair (d + 1) (d + half) / 2 for a causal span of d keys, each run at
  // d / (d + half) of the long-span rate: a d^2 + b d + c with a = pair / 2,
  // b = linear + pair (1 + half) / 2 and c = pair half / 2 (the attention's per-document start).
  const double half = cost.attention_half_seq;
  const double a = cost.attention_s_per_pair / 2.0;
  const double b = cost.linear_s_per_token + cost.attention_s_per_pair * (1.0 + half) / 2.0;
  const double c = cost.attention_s_per_pair * half / 2.0;
  for (double d : {1.0, 1500.0, 12000.0, 131072.0}) EXPECT_LT(rel_err(cost.time_s(d), a * d * d + b * d + c), 1e-12);
  // Second difference of a quadratic: t(3d) - 2 t(2d) + t(d) = 2 a d^2.
  const double d = 4096.0;
  EXPECT_LT(rel_err(cost.time_s(3 * d) - 2 * cost.time_s(2 * d) + cost.time_s(d), 2 * a * d * d), 1e-6);
  // At 128K the attention term is the larger one (WLB-LLM §3: quadratic work dominates long documents).
  EXPECT_GT(cost.attention_s_per_pair * cost.pairs(131072), cost.linear_s_per_token * 131072);
}

TEST(SampleCost, BelowTheCostModelsComputeTimeForTheSameSequence) {
  const ModelSpec model = builtin_model("llama3-8b");
  const Cluster cluster = make_cluster(find_gpu("h100-sxm-80gb"), 1);
  Plan plan;
  Workload workload{1, kPacked};
  validate_plan(plan, model, cluster, workload);
  const Estimate e = estimate(model, cluster, plan, workload);
  const SampleCostModel costs = make_sample_cost_model(model, cluster.gpu, kPacked);
  const double predicted = sample_cost(costs, SampleTokens{{kPacked}, {}, 0}).total_s();
  EXPECT_LT(predicted, e.time.compute_s);
  EXPECT_GT(predicted, 0.7 * e.time.compute_s) << "GEMMs and attention are most of a step's compute";
}

TEST(SampleCost, SpansAddUpAndImagesJoinTheFirstDocument) {
  const SampleCostModel m = make_sample_cost_model(builtin_model("llama3-8b"), find_gpu("h100-sxm-80gb"), kPacked);
  const SampleCost two = sample_cost(m, SampleTokens{{1000, 3000}, {}, 0});
  EXPECT_LT(rel_err(two.backbone_s, m.backbone.time_s(1000) + m.backbone.time_s(3000)), 1e-12);
  const SampleCost captioned = sample_cost(m, SampleTokens{{48, 500}, {576, 256}, 256});
  EXPECT_LT(rel_err(captioned.backbone_s, m.backbone.time_s(48 + 576 + 256) + m.backbone.time_s(500)), 1e-12);
  EXPECT_LT(rel_err(captioned.encoder_s, m.encoder.time_s(576) + m.encoder.time_s(256)), 1e-12);
  EXPECT_LT(rel_err(captioned.generator_s, m.generator.time_s(256)), 1e-12);
  EXPECT_DOUBLE_EQ(captioned.total_s(), captioned.backbone_s + captioned.encoder_s + captioned.generator_s);
  // Bidirectional modules: every image token sees every other one (d^2 pairs).
  EXPECT_FALSE(m.encoder.causal);
  EXPECT_DOUBLE_EQ(m.encoder.pairs(576), 576.0 * 576.0);
}

TEST(SampleCost, AnImageCostsTheEncoderMoreThanACaptionCostsIt) {
  // The premise of multimodal balancing: a sample's cost follows its images, not its text.
  const SampleCostModel m = make_sample_cost_model(builtin_model("llama3-8b"), find_gpu("h100-sxm-80gb"), kPacked);
  const SampleCost small = sample_cost(m, SampleTokens{{200}, {256}, 0});
  const SampleCost large = sample_cost(m, SampleTokens{{20}, {2304}, 0});
  EXPECT_GT(large.encoder_s, 9.0 * small.encoder_s);  // 9x the tokens, plus quadratic attention
  EXPECT_GT(large.total_s(), small.total_s());
}

}  // namespace
}  // namespace tessera
