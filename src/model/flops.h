// FLOPs of one training iteration, split into forward, backward and recompute.
//
// Model FLOPs follow the Megatron-Core convention (num_floating_point_operations, r0.8; Korthikanti
// et al. 2022 eq. 7 for GPT): GEMMs at 2 FLOPs per weight per token, attention scores and values
// over the full s x s matrix, the logit GEMM, backward = 2 x forward, no recompute. Hardware FLOPs
// add the recomputed forward work.
#pragma once

#include <cstdint>

#include "model/model_spec.h"

namespace tessera {

enum class Recompute { none, selective, full };
const char* to_string(Recompute value);
Recompute parse_recompute(const std::string& text);  // throws Error("recompute", ...)

// Forward FLOPs per token, summed over all layers. The first four fields are the main model's
// `layers` layers and head; the MTP modules (ModelSpec::mtp_layers) are kept apart so that
// per-layer callers can divide the main fields by `layers`.
struct ForwardFlopsPerToken {
  double attention_linear = 0;  // Q/K/V/O (or MLA) projections
  double attention_core = 0;    // Q.K^T and P.V products
  double mlp = 0;               // dense and active MoE MLPs, routers
  double logits = 0;            // the LM head GEMM
  // All MTP modules: their norms and 2h -> h projections, and their transformer layers (of the
  // last layer's kind, attention core included).
  double mtp_blocks = 0;
  double mtp_logits = 0;  // the MTP modules' logit GEMMs on the shared head
  double layers() const { return attention_linear + attention_core + mlp; }
  double mtp() const { return mtp_blocks + mtp_logits; }
  double total() const { return layers() + logits + mtp(); }
};

// `causal_span`: false counts the full s x s matrix (the model-FLOPs convention); true counts what
// a causal (and, for gqa-swa, windowed) fused attention kernel actually computes.
ForwardFlopsPerToken forward_flops_per_token(const ModelSpec& model, std::int64_t seq,
                                             bool causal_span);

struct IterationFlops {
  double forward = 0;
  double backward = 0;
  double recompute = 0;
  double model() const { return forward + backward; }
  double hardware() const { return forward + backward + recompute; }
};

// FLOPs of one iteration over `tokens` tokens in sequences of `seq`, full-matrix convention.
// Recompute covers the main layers only (selective: their attention core; full: all of them).
IterationFlops iteration_flops(const ModelSpec& model, double tokens, std::int64_t seq,
                               Recompute recompute);

// Mean number of keys one query attends to in a causal sequence of `seq` with window `window`
// (0 = unlimited). (seq + 1) / 2 without a window.
double causal_attention_span(std::int64_t seq, std::int64_t window);

}  // namespace tessera
