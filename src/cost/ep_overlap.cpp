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

}  // namespace tessera
