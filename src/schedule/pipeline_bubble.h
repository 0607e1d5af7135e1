// Closed-form pipeline makespan for 1F1B (PipeDream-flush) and interleaved 1F1B, from per-stage
// per-micro-batch times (Narayanan et al. SC'21 §2.2: bubble = (p-1)/v of one micro-batch's time).
// Generalised to uneven stages: the steady state runs at the slowest stage, the fill and drain
// traverse every stage once (divided by v with interleaving):
//   T = m * t_max + (sum_s t_s - t_max) / v
// With equal stages this is (m + p - 1) t for v = 1 and m t + (p - 1) t / v when interleaved.
#pragma once

namespace tessera {

struct PipelineTimes {
  double makespan_s = 0;
  double steady_s = 0;  // m * t_max
  double bubble_s = 0;  // makespan - steady
};

// `stage_sum_s` = sum over stages of one micro-batch's time, `stage_max_s` = the slowest stage.
// `chunk_bubble_s` (interleaved with unequal chunks): (p - 1) times the slowest chunk's time;
// the fill and drain run chunk by chunk, so a stage's heavier chunks set them, and the bubble is
// at least that (equal chunks give exactly (sum - max) / v).
PipelineTimes pipeline_closed_form(double stage_sum_s, double stage_max_s, long microbatches,
                                   long chunks_per_stage, double chunk_bubble_s = 0);

}  // namespace tessera
