// The predicted training time of a sample, from the cost model's compute terms (cost/compute_cost.h)
// and the model's FLOP counts (model/flops.h).
//
// One attention span of d tokens (a document, an image, a generated image) costs
//   linear_s_per_token * d + attention_s_per_pair * pairs(d)
// with pairs(d) = d (d + 1) / 2 query-key pairs for a causal span and d^2 for a bidirectional one;
// for a causal document that is the a d^2 + b d of WLB-LLM (Wang et al., OSDI'25, §3: attention
// grows with the square of each document's length, the GEMMs linearly). Per-micro-batch constants
// (kernel launches, host dispatch, the optimizer step) do not depend on which samples a slot holds
// and are left out.
#pragma once

#include <cstdint>

#include "balance/module_shape.h"
#include "balance/sample_tokens.h"
#include "hardware/gpu_spec.h"
#include "model/model_spec.h"

namespace tessera {

// Samples are costed with GEMMs and attention at the 16-bit peak (not FP8), here and in
// cp_microbatch_cost.cpp.
inline constexpr bool kSampleCostFp8 = false;

struct SpanCost {
  double linear_s_per_token = 0;    // GEMMs, forward + backward
  double attention_s_per_pair = 0;  // fused attention per query-key pair, forward + backward
  bool causal = true;
  // Keys per query tile at which the attention kernel's efficiency halves (GpuSpec::
  // attention_half_seq; cost/compute_cost.h): a span of d keys runs at d / (d + half) of the
  // long-span rate, so its pairs cost (1 + half / d) times more.
  double attention_half_seq = 0;

  double pairs(double tokens) const { return causal ? tokens * (tokens + 1.0) / 2.0 : tokens * tokens; }
  double attention_s(double tokens) const {
    return tokens > 0 ? attention_s_per_pair * pairs(tokens) * (1.0 + attention_half_seq / tokens) : 0.0;
  }
  double time_s(double tokens) const { return linear_s_per_token * tokens + attention_s(tokens); }
};

struct SampleCostModel {
  SpanCost backbone;   // causal decoder
  SpanCost encoder;    // bidirectional, per image
  SpanCost generator;  // bidirectional, per sample's generated tokens
};

struct SampleCost {
  double backbone_s = 0;
  double encoder_s = 0;
  double generator_s = 0;
  double total_s() const { return backbone_s + encoder_s + generator_s; }
};

// Forward + backward of GEMMs: the forward, then the input-gradient and weight-gradient GEMMs of
// the same size (Narayanan et al., SC'21, eq. 3: 3 x 2 FLOPs per weight per token).
inline constexpr double kGemmTrainingOverForward = 3.0;
// Fused attention: the backward runs five matmuls against the forward's two (Dao 2023,
// FlashAttention-2 §3.1.2), so forward + backward = 3.5 x forward.
inline constexpr double kFlashTrainingOverForward = 3.5;

// `packed_tokens`: tokens of one packed micro-batch on a GPU (the M dimension of its GEMMs, which
// sets their efficiency). Bidirectional modules use `encoder` / `generator` shapes.
SpanCost backbone_span_cost(const ModelSpec& backbone, const GpuSpec& gpu, std::int64_t packed_tokens);
SpanCost module_span_cost(const ModuleShape& module, const GpuSpec& gpu, std::int64_t packed_tokens);
SampleCostModel make_sample_cost_model(const ModelSpec& backbone, const GpuSpec& gpu, std::int64_t packed_tokens,
                                       const ModuleShape& encoder = kVitH14Encoder,
                                       const ModuleShape& generator = kDitXl2Generator);

// Backbone spans: the first document together with the sample's images (an image sits in the
// conversation it belongs to), then each further document on its own.
SampleCost sample_cost(const SampleCostModel& model, const SampleTokens& sample);

}  // namespace tessera
