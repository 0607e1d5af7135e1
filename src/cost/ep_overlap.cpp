#include "cost/ep_overlap.h"

#include <algorithm>

namespace tessera {

double ep_overlap_exposed_s(const PairedLayerWork& w) {
  const double combine_backward_phase = std::max(w.combine_s, w.attention_fwd_s);
  const double dispatch_phase = std::max(2.0 * w.dispatch_s, w.mlp_bwd_s + w.mlp_fwd_s);
  const double combine_forward_phase = std::max(w.combine_s, w.attention_bwd_s);
  const double compute = w.attention_fwd_s + w.mlp_fwd_s + w.attention_bwd_s + w.mlp_bwd_s;
  return std::max(0.0, combine_backward_phase + dispatch_phase + combine_forward_phase - compute);
}

double unpaired_pass_fraction(std::int64_t pp, std::int64_t vpp, std::int64_t stage, std::int64_t microbatches) {
  const std::int64_t passes = microbatches * vpp;
  if (passes <= 0) return 0.0;
  std::int64_t warmup = 1;  // no pipeline: the first forward
  if (pp > 1) warmup = (pp - stage - 1) * 2 + (vpp - 1) * pp + 1;
  return static_cast<double>(std::min(warmup, passes)) / static_cast<double>(passes);
}

}  // namespace tessera
