// The planner's ranking of costed plans: the order (faster, smaller, simpler), the plans the cost
// model cannot tell apart (aliases), ties and the variants of one layout a better one dominates.
#pragma once

#include <cstdint>
#include <tuple>
#include <vector>

#include "hardware/cluster.h"
#include "search/planner.h"

namespace tessera {

// Ranking order: faster first, then smaller, then simpler (less sharding, bf16, less recompute,
// fewer chunks, smaller micro-batches, fewer cp / ep / pp ranks, default expert keys).
inline bool ranked_before(const RankedPlan& a, const RankedPlan& b) {
  if (a.estimate.iteration_time_s != b.estimate.iteration_time_s)
    return a.estimate.iteration_time_s < b.estimate.iteration_time_s;
  if (a.estimate.peak_memory_bytes != b.estimate.peak_memory_bytes)
    return a.estimate.peak_memory_bytes < b.estimate.peak_memory_bytes;
  const Plan& x = a.plan;
  const Plan& y = b.plan;
  return std::tie(x.zero, x.precision, x.recompute, x.recompute_modules, x.recompute_layers, x.vpp, x.micro_batch,
                  x.cp, x.ep, x.pp, x.tp, x.etp, x.dispatcher, x.overlap_ep, x.delay_wgrad, x.fp8_param_gather) <
         std::tie(y.zero, y.precision, y.recompute, y.recompute_modules, y.recompute_layers, y.vpp, y.micro_batch,
                  y.cp, y.ep, y.pp, y.tp, y.etp, y.dispatcher, y.overlap_ep, y.delay_wgrad, y.fp8_param_gather);
}

// Identical in every reported term: the cost model does not tell the two plans apart.
inline bool same_estimate(const Estimate& a, const Estimate& b) {
  const TimeBreakdown& s = a.time;
  const TimeBreakdown& t = b.time;
  const MemoryBreakdown& m = a.memory;
  const MemoryBreakdown& n = b.memory;
  return a.iteration_time_s == b.iteration_time_s && a.peak_memory_bytes == b.peak_memory_bytes &&
         a.hardware_flops == b.hardware_flops && a.peak_memory_stage == b.peak_memory_stage &&
         std::tie(s.compute_s, s.recompute_s, s.tp_comm_s, s.cp_comm_s, s.ep_comm_s, s.pp_comm_s, s.bubble_s,
                  s.dp_comm_s, s.optimizer_s) ==
             std::tie(t.compute_s, t.recompute_s, t.tp_comm_s, t.cp_comm_s, t.ep_comm_s, t.pp_comm_s, t.bubble_s,
                      t.dp_comm_s, t.optimizer_s) &&
         std::tie(m.weights_bytes, m.gradients_bytes, m.optimizer_bytes, m.activations_bytes, m.logits_bytes,
                  m.buffers_bytes, m.framework_bytes) ==
             std::tie(n.weights_bytes, n.gradients_bytes, n.optimizer_bytes, n.activations_bytes, n.logits_bytes,
                      n.buffers_bytes, n.framework_bytes);
}

// Sorted best first; drops (and counts) every entry identical in estimate, or in configuration,
// to a better one.
std::int64_t drop_aliases(std::vector<RankedPlan>& plans);
// Within a run of ties (times within kTimeTieFraction of the run's fastest): lower peak memory,
// then fewer groups crossing nodes, then the simpler plan.
void order_ties(std::vector<RankedPlan>& plans, const Cluster& cluster);
// Drops (and counts) each plan that a better-ranked plan of the same layout dominates: zero1 and
// zero3 costing the same, dp and cp swapped with the micro-batch, a switch that buys nothing.
std::int64_t drop_dominated_variants(std::vector<RankedPlan>& plans, const Cluster& cluster);

}  // namespace tessera
