// PipelineSimulator: event-driven simulation of one training iteration's pipeline over p stages
// x m micro-batches (x v chunks), for uneven stages, uneven micro-batches and per-boundary p2p.
//
// Each stage runs its program (pipeline_schedule.h) in order; an operation starts when its stage
// is free and its input is there: a forward needs the same micro-batch's forward on the previous
// virtual stage (+ the p2p time of that boundary), a backward the next virtual stage's backward
// (+ p2p), a weight-gradient op its own backward. After its last operation each stage runs its
// data-parallel gradient sync, chunk by chunk, which may overlap each chunk's last backward.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "schedule/pipeline_schedule.h"

namespace tessera {

// Durations are indexed [virtual_stage * microbatches + microbatch], virtual stage = chunk *
// stages + stage (Megatron's layout: chunk c of stage s holds the (c p + s)-th slice of layers).
struct PipelineCosts {
  Schedule schedule = Schedule::one_f_one_b;
  int stages = 1;
  int microbatches = 1;
  int chunks = 1;
  std::vector<double> forward_s;
  std::vector<double> backward_s;  // input-gradient part for zb-h1, whole backward otherwise
  std::vector<double> weight_s;    // zb-h1 weight-gradient part; empty for other schedules
  std::vector<double> p2p_s;       // per boundary stage s -> s+1; [p-1] is the wrap (interleaving)
  std::vector<double> dp_sync_s;   // per stage; empty = none
  // Per stage, the part of dp_sync_s whose gradients are complete only when the stage's last op
  // ends (the bucket that holds the embedding), sent after the rest; empty = none.
  std::vector<double> dp_sync_tail_s;
  // Each chunk's share of the sync may start when that chunk's last backward starts (else after
  // the stage's last op); the shares go out one after another.
  bool dp_sync_overlap = true;

  std::size_t virtual_stages() const { return static_cast<std::size_t>(stages) * chunks; }
  // Uniform costs: every micro-batch of a physical stage takes fwd/bwd/wgrad over its chunks
  // (each chunk a 1/v share), zero p2p, no DP sync.
  static PipelineCosts uniform(Schedule schedule, int stages, int microbatches, int chunks,
                               double forward_s, double backward_s, double weight_s = 0.0);
  void validate() const;  // throws Error naming the field
};

struct TimelineOp {
  std::int32_t stage = 0;
  std::int32_t chunk = 0;
  std::int32_t microbatch = 0;
  OpKind kind = OpKind::forward;
  double start_s = 0;
  double end_s = 0;
};

struct P2pEvent {  // an activation (forward) or gradient (backward) in flight between stages
  std::int32_t from_stage = 0;
  std::int32_t to_stage = 0;
  std::int32_t microbatch = 0;
  std::int32_t chunk = 0;  // the receiving chunk
  OpKind kind = OpKind::forward;
  double start_s = 0;
  double end_s = 0;
};

struct SyncEvent {  // a stage's gradient sync: it ends the stage at max(last op end, end_s)
  std::int32_t stage = 0;
  double start_s = 0;
  double end_s = 0;
};

struct StageSummary {
  double busy_s = 0;
  double idle_s = 0;           // pipeline makespan (before DP sync) - busy
  double bubble_fraction = 0;  // idle / pipeline makespan
  double peak_inflight = 0;    // peak micro-batches with activations held (chunk units / v);
                               // released at B (ZB-H1's W keeps only the layer inputs)
};

struct Timeline {
  std::vector<TimelineOp> ops;  // stage by stage, each in program order
  std::vector<P2pEvent> p2p;    // only where the boundary's p2p time is positive
  std::vector<SyncEvent> syncs;
  std::vector<StageSummary> stages;
  std::vector<std::size_t> critical_path;  // indices into ops, first to last
  double pipeline_makespan_s = 0;  // last operation's end
  double makespan_s = 0;           // including DP syncs
  double bubble_fraction = 0;      // mean over stages
};

// Reusable simulator: keeps its buffers between runs, so repeated simulations of the same shape
// allocate nothing.
class PipelineSimulator {
 public:
  using OpIndex = std::int32_t;  // an op's index in the programs (4 bytes: memory at 10^7 ops)
  // Full timeline (ops, p2p, syncs, summaries, critical path).
  Timeline run(const PipelineCosts& costs);
  // Makespan only (including DP syncs); the pipeline part alone goes to *pipeline_makespan_s.
  double makespan(const PipelineCosts& costs, double* pipeline_makespan_s = nullptr);

 private:
  void simulate(const PipelineCosts& costs);
  void build_programs(const PipelineCosts& costs);
  // After the pipeline: each stage's data-parallel gradient sync, chunk share by chunk share.
  void sync_gradients(const PipelineCosts& costs);

  // Programs, cached by shape.
  Schedule program_schedule_ = Schedule::one_f_one_b;
  int program_p_ = 0, program_m_ = 0, program_v_ = 0;
  std::vector<StageOp> program_;
  std::vector<std::size_t> program_begin_;  // p + 1 offsets into program_
  std::vector<StageOp> scratch_;
  // Per run.
  std::vector<double> start_, end_;         // per op in program_ order
  std::vector<OpIndex> pred_;               // binding predecessor op (or -1)
  std::vector<OpIndex> f_index_, b_index_, w_index_;  // [vs * m + mb] -> op index, -1 until run
  std::vector<std::size_t> next_;           // per stage: next op to run
  std::vector<int> ring_;                   // per stage: work list of stages to advance
  std::vector<char> queued_;                // per stage: on the work list
  std::vector<double> free_at_;             // per stage
  std::vector<double> sync_begin_, sync_end_;  // per stage
  std::vector<double> ready_;               // per chunk, scratch
  std::vector<char> seen_;                  // per chunk, scratch
  double pipeline_end_ = 0, end_with_sync_ = 0;
};

}  // namespace tessera
