#include "cost/pipeline_p2p.h"

#include "core/units.h"
#include "cost/collective_cost.h"

namespace tessera {

PipelineP2p pipeline_p2p(const Plan& p, const Cluster& c, double tokens, double tp, std::int64_t hidden,
                         std::int64_t microbatches) {
  PipelineP2p t;
  const std::int64_t pp_stride = p.tp * p.cp * p.dp;
  t.stages_per_node = pp_stride >= c.gpus_per_node ? 1 : c.gpus_per_node / pp_stride;
  if (p.pp <= 1) return t;
  const bool split_activation = p.p2p_scatter_gather || p.sequence_parallel;
  const double bytes = units::kBytesBf16 * tokens * static_cast<double>(hidden) / (split_activation ? tp : 1.0);
  t.intra_s = p2p_time_s(bytes, {c.intra_node.bandwidth_bytes_per_s, c.intra_node.latency_s});
  t.inter_s = p2p_time_s(bytes, {c.inter_node.bandwidth_bytes_per_s, c.inter_node.latency_s});
  double fill_s = 0;
  for (std::int64_t s = 0; s + 1 < p.pp; ++s) fill_s += t.boundary_s(s);
  t.mean_s = fill_s / static_cast<double>(p.pp - 1);
  // Fill and drain cross every boundary once each way. Blocking p2p: a middle stage receives and
  // sends once each way per micro-batch and chunk, serialised with its compute (DeepSpeed
  // PipelineEngine's RecvActivation / SendActivation / RecvGrad / SendGrad instructions).
  const double steady = p.overlap_p2p ? 0.0 : 4.0 * static_cast<double>(p.vpp * microbatches) * t.mean_s;
  // Interleaved, the first micro-batch's forward passes through every virtual stage: each
  // round's pp - 1 boundaries and the vpp - 1 wraps from the last stage back to the first (the
  // drain likewise), as the simulator's timeline has them.
  const double vpp = static_cast<double>(p.vpp);
  const double traversal_s = vpp * fill_s + (vpp - 1.0) * t.boundary_s(p.pp - 1);
  t.exposed_s = 2.0 * traversal_s + steady;
  return t;
}

}  // namespace tessera
