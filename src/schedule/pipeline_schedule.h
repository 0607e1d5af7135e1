// The pipeline schedules Tessera simulates and the order of operations each stage runs.
//
//   gpipe        all forwards, then all backwards (Huang et al. 2019, GPipe)
//   1f1b         PipeDream-flush (Narayanan et al. 2021): p-s-1 warm-up forwards on stage s, then
//                one forward / one backward, then the remaining backwards
//   interleaved  Megatron-LM's interleaved 1F1B with v model chunks per stage (Narayanan et al.
//                SC'21 §2.2): warm-up 2(p-s-1) + (v-1)p chunk-forwards, chunk order by groups of p
//   zb-h1        zero-bubble ZB-H1 (Qi et al. 2024, "Zero Bubble Pipeline Parallelism", §3.1):
//                backward split into input-gradient B and weight-gradient W; stage s runs
//                (F_x, B_{x-(p-1-s)}, W_{x-(p-1)}) for x = 0, 1, ..., dropping indices outside
//                [0, m), so peak activation memory equals 1F1B's; with uniform costs its makespan
//                is the paper's m(F+B+W) + (p-1)(F+B-W) when m >= p and W <= min(F, B)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tessera {

enum class Schedule { gpipe, one_f_one_b, interleaved, zb_h1 };
const char* to_string(Schedule schedule);
Schedule parse_schedule(const std::string& text);  // throws Error("schedule", ...)

enum class OpKind : std::uint8_t { forward, backward, weight };  // F, B, W

// One operation in a stage's program: which chunk (virtual stage index on this physical stage)
// and micro-batch it works on.
struct StageOp {
  OpKind kind = OpKind::forward;
  std::int32_t chunk = 0;
  std::int32_t microbatch = 0;
};

// Appends stage `stage`'s program to `out` (cleared first). Preconditions: checked by
// validate_schedule_shape.
void stage_program(Schedule schedule, int stages, int microbatches, int chunks, int stage,
                   std::vector<StageOp>& out);

// Operations one simulation may hold over all stages, p x m x v x (2, or 3 for zb-h1): bounds
// the simulator's and its timeline's memory (~150 bytes an operation with transfers) to ~2 GB,
// far above any real job (64 stages x 1,024 micro-batches x 4 chunks x 2 is 0.5 million).
inline constexpr std::int64_t kMaxSimulatedOps = 10'000'000;

// Operations in one simulation of this shape (saturating).
std::int64_t simulated_ops(Schedule schedule, std::int64_t stages, std::int64_t microbatches, std::int64_t chunks);

// Throws Error naming the field when the shape does not suit the schedule (e.g. interleaving
// with m not a multiple of p, or v > 1 for a schedule without chunks) or has more than
// kMaxSimulatedOps operations.
void validate_schedule_shape(Schedule schedule, std::int64_t stages, std::int64_t microbatches,
                             std::int64_t chunks);

}  // namespace tessera
