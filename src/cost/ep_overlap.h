// Expert-parallel all-to-all overlap (--overlap-moe-expert-parallel-comm, Megatron-Core's 1F1B
// A2A overlap): one MoE layer's forward of one micro-batch runs beside its backward of another,
// communication on one stream and computation on the other.
//
// Megatron-Core's schedule_layer_1f1b (megatron/core/models/common/model_chunk_schedule_plan.py,
// TransformerLayerSchedulePlan.run, at d98e8a64) runs each such pair in three phases, each as long
// as the longer of its two streams:
//   communication: combine backward | dispatch forward, dispatch backward | combine forward
//   computation:   attention fwd    | MLP backward (dgrad, wgrad), MLP fwd | attention backward
// An all-to-all therefore hides only under the compute its phase pairs it with, not under the
// whole layer: a layer whose dispatches outlast its MLP pays the difference even when its attention
// has time to spare.
#pragma once

#include <cstdint>

namespace tessera {

// One MoE layer's work in a paired forward + backward. The attention side is everything before the
// dispatch (norms, attention, router); the MLP side the permutation, the experts and the shared
// experts. An all-to-all takes as long backward as forward (the same tokens by the reverse route).
struct PairedLayerWork {
  double attention_fwd_s = 0, mlp_fwd_s = 0;
  double attention_bwd_s = 0, mlp_bwd_s = 0;
  double dispatch_s = 0, combine_s = 0;
};
// No recomputation runs the all-to-alls again under the overlap: Megatron refuses it with full
// recompute and with the moe module recomputed (plan/plan.cpp checks both).

// The all-to-all time the three phases leave exposed: their length minus the layer's compute.
// Between max(0, all-to-alls - compute) (everything hides that any compute could hide) and the
// all-to-alls' whole length.
double ep_overlap_exposed_s(const PairedLayerWork& work);

// Only the steady state pairs a forward with a backward: the warm-up's forwards and the cool-down's
// backwards run alone, their all-to-alls exposed. The share of a stage's chunk passes (each chunk
// of each micro-batch, forward or backward) that run alone, from Megatron-Core's schedules.py
// (get_pp_rank_microbatches, at d98e8a64): interleaved, stage s warms up with
// (pp - s - 1) * 2 + (vpp - 1) * pp chunk forwards (--microbatch-group-size-per-virtual-pipeline-stage
// defaults to pp) and one more under this overlap; without a pipeline (combined_1f1b.py's
// no-pipelining schedule) the first forward and the last backward run alone. At most all of them.
// (With a pipeline, Megatron runs this overlap only interleaved, vpp > 1: plan/plan.cpp.)
double unpaired_pass_fraction(std::int64_t pp, std::int64_t vpp, std::int64_t stage, std::int64_t microbatches);

}  // namespace tessera
