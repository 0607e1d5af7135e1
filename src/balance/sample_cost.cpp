#include "balance/sample_cost.h"

#include "cost/compute_cost.h"
#include "model/flops.h"

namespace tessera {

namespace {
constexpr double kFlopsPerMac = 2.0;

// Fused attention over a packed sequence of `packed_tokens`: one kernel call of `heads` heads
// over all of it fills the SMs (the tile saturation); the keys each tile walks are its own
// span's (SpanCost::attention_half_seq), so the per-pair rate here leaves that saturation out.
double packed_attention_rate(const GpuSpec& gpu, double heads, double head_dim, std::int64_t packed_tokens) {
  GpuSpec long_spans = gpu;
  long_spans.attention_half_seq = 0;
  return gpu.peak_flops(kSampleCostFp8) * attention_efficiency({heads, static_cast<double>(packed_tokens), head_dim}, long_spans);
}
}  // namespace

SpanCost backbone_span_cost(const ModelSpec& backbone, const GpuSpec& gpu, std::int64_t packed_tokens) {
  // Per token, with the full-matrix convention at seq = 1: attention_core is then the FLOPs of
  // one query-key pair summed over the layers.
  const ForwardFlopsPerToken per_token = forward_flops_per_token(backbone, 1, /*causal_span=*/false);
  const double linear_flops = per_token.attention_linear + per_token.mlp + per_token.logits;
  const double h = static_cast<double>(backbone.hidden);
  const double gemm_rate = gpu.peak_flops(kSampleCostFp8) * gemm_efficiency(static_cast<double>(packed_tokens), h, h, gpu, kSampleCostFp8);
  const double attention_rate = packed_attention_rate(gpu, static_cast<double>(backbone.heads),
                                                    static_cast<double>(backbone.head_dim), packed_tokens);
  SpanCost cost;
  cost.linear_s_per_token = kGemmTrainingOverForward * linear_flops / gemm_rate;
  cost.attention_s_per_pair = kFlashTrainingOverForward * per_token.attention_core / attention_rate;
  cost.attention_half_seq = gpu.attention_half_seq;
  cost.causal = true;
  return cost;
}

SpanCost module_span_cost(const ModuleShape& module, const GpuSpec& gpu, std::int64_t packed_tokens) {
  const double h = static_cast<double>(module.hidden);
  const double gemm_rate = gpu.peak_flops(kSampleCostFp8) * gemm_efficiency(static_cast<double>(packed_tokens), h, h, gpu, kSampleCostFp8);
  const double attention_rate = packed_attention_rate(gpu, static_cast<double>(module.heads),
                                                    static_cast<double>(module.head_dim), packed_tokens);
  // Q.K^T and P.V: two MACs per head dimension per pair per head.
  const double pair_flops = kFlopsPerMac * 2.0 * static_cast<double>(module.heads * module.head_dim) *
                            static_cast<double>(module.layers);
  SpanCost cost;
  cost.linear_s_per_token = kGemmTrainingOverForward * kFlopsPerMac * module.gemm_weights() / gemm_rate;
  cost.attention_s_per_pair = kFlashTrainingOverForward * pair_flops / attention_rate;
  cost.attention_half_seq = gpu.attention_half_seq;
  cost.causal = false;
  return cost;
}

SampleCostModel make_sample_cost_model(const ModelSpec& backbone, const GpuSpec& gpu, std::int64_t packed_tokens,
                                       const ModuleShape& encoder, const ModuleShape& generator) {
  return {backbone_span_cost(backbone, gpu, packed_tokens), module_span_cost(encoder, gpu, packed_tokens),
          module_span_cost(generator, gpu, packed_tokens)};
}

SampleCost sample_cost(const SampleCostModel& model, const SampleTokens& sample) {
  SampleCost cost;
  double first_span = sample.text_tokens.empty() ? 0.0 : static_cast<double>(sample.text_tokens.front());
  for (std::int64_t image : sample.image_tokens) {
    first_span += static_cast<double>(image);
    cost.encoder_s += model.encoder.time_s(static_cast<double>(image));
  }
  cost.backbone_s = model.backbone.time_s(first_span);
  for (std::size_t i = 1; i < sample.text_tokens.size(); ++i)
    cost.backbone_s += model.backbone.time_s(static_cast<double>(sample.text_tokens[i]));
  if (sample.generated_tokens > 0) cost.generator_s = model.generator.time_s(static_cast<double>(sample.generated_tokens));
  return cost;
}

}  // namespace tessera
