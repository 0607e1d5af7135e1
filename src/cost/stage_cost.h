// The per-micro-batch time of one pipeline stage, split into its parts, and how layers and chunks
// add up into it (cost_model.cpp). Inline: the planner adds these up millions of times.
#pragma once

#include "cost/layer_cost.h"

namespace tessera {

// Per-micro-batch time of one physical stage, split into its parts.
struct StageCost {
  double compute_s = 0;    // forward + backward + recompute compute
  double recompute_s = 0;
  double tp_s = 0, cp_s = 0, ep_s = 0;
  double ep_total_s = 0;   // the expert all-to-all before EP overlap (ep_s: what it leaves exposed)
  double fwd_s = 0, bwd_s = 0;  // forward / backward (incl. recompute and comm) of one micro-batch
  double total() const { return compute_s + tp_s + cp_s + ep_s; }
};

inline void add_layers(StageCost& s, const LayerCost& l, double count) {
  if (count <= 0) return;
  s.compute_s += count * (l.fwd_s + l.bwd_s + l.recompute_s);
  s.recompute_s += count * l.recompute_s;
  s.tp_s += count * l.tp_s;
  s.cp_s += count * l.cp_s;
  s.ep_s += count * l.ep_s;
  s.ep_total_s += count * l.ep_total_s;
  // Split communication between forward and backward by the compute ratio.
  const double compute = l.fwd_s + l.bwd_s + l.recompute_s;
  const double fwd_share = compute > 0 ? l.fwd_s / compute : 0.5;
  s.fwd_s += count * (l.fwd_s + l.comm_s * fwd_share);
  s.bwd_s += count * (l.bwd_s + l.recompute_s + l.comm_s * (1.0 - fwd_share));
}

inline void add_cost(StageCost& sc, const StageCost& e) {
  sc.compute_s += e.compute_s;
  sc.recompute_s += e.recompute_s;
  sc.tp_s += e.tp_s;
  sc.cp_s += e.cp_s;
  sc.ep_s += e.ep_s;
  sc.ep_total_s += e.ep_total_s;
  sc.fwd_s += e.fwd_s;
  sc.bwd_s += e.bwd_s;
}

// Under EP overlap, the all-to-all that a stage's unpaired passes leave exposed
// (cost/ep_overlap.h unpaired_pass_fraction: that share of its forwards and of its backwards runs
// alone), spread over the micro-batches as the rest of the per-micro-batch cost is.
inline void expose_unpaired_passes(StageCost& sc, double unpaired_fraction) {
  const double extra = unpaired_fraction * (sc.ep_total_s - sc.ep_s);
  sc.ep_s += extra;
  sc.fwd_s += 0.5 * extra;
  sc.bwd_s += 0.5 * extra;
}

}  // namespace tessera
