// Training logs read for `tessera calibrate`: Megatron-LM iteration lines and torchtitan step lines,
// with the launch arguments the same log prints (megatron_log.h, torchtitan_log.h). Pure functions
// from text to plain values; every malformed line is an Error naming it ("log:<file>:<line>").
//
// Warm-up rule (warmup_count): the leading entries dropped before the steady state are
//   1. the first logged entry, always: it holds the first iteration (CUDA/NCCL initialisation,
//      compilation, first-touch allocations); torchtitan always logs step 1 (metrics.py should_log);
//   2. Megatron-LM only: the second entry too when the first is off the logging grid (its iteration
//      is not a multiple of the interval between the last two entries): Megatron prints a line after
//      the first iteration without resetting its timers (training.py training_log
//      is_first_iteration, d98e8a64), so the next line's average still contains that iteration;
//   3. every further leading entry whose iteration is at most kWarmupFraction (10%) of the last
//      logged iteration (allocator growth and clock ramp settle over the first iterations);
//   4. a batch-size ramp-up (Megatron --rampup-batch-size): every entry before the last change of
//      the logged global batch size; a size that changes back is an Error.
// At least one entry must remain (else an Error naming the last line).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

// The largest training log read (bytes): 256 MiB holds ~10^6 Megatron iteration lines, far more
// than a run logs at its usual interval, and is read and parsed within the 10 s and 2 GB every
// input limit keeps (README "Limits").
inline constexpr std::uintmax_t kMaxLogFileBytes = std::uintmax_t{256} << 20;

struct LogIteration {
  std::int64_t iteration = 0;  // the framework's iteration / step number
  std::size_t line = 0;        // 1-based line in the file
  // Megatron: elapsed time per iteration (an average over the log interval). torchtitan: derived
  // as tokens per step / (GPUs x tps) (torchtitan_iteration_time_s); 0 while those are unknown.
  double iteration_time_s = 0;
  std::optional<double> tflops_per_gpu, mfu_pct, tokens_per_s_per_gpu, memory_gib, loss;
  std::optional<std::int64_t> global_batch;
};

struct TrainingLog {
  std::string file;    // name for errors
  std::string format;  // "megatron-lm" or "torchtitan"
  std::vector<LogIteration> iterations;  // every iteration line, in order
  std::size_t warmup_iterations = 0;     // how many leading entries the warm-up rule drops
  // Megatron: the argument dump (dest name -> printed value). torchtitan: the device-mesh line
  // (pp, dp_replicate, dp_shard, cp, tp, ep), the trainer line (tokens_per_train_step, ...) and
  // the "Running with configs" JSON flattened ("parallelism.tensor_parallel_degree").
  std::map<std::string, std::string> arguments;
  std::map<std::string, std::size_t> argument_lines;  // where each argument was read
  std::size_t arguments_line = 0;  // where the dump starts (0 = none)
  // Megatron: the largest "max reserved" of the memory reports (the peak rank); torchtitan: the
  // largest per-window max reserved of the step lines. MiB / GiB = 2^20 / 2^30 bytes.
  std::optional<double> peak_memory_gib;

  // The median iteration time over the entries after warm-up; Error when it is unknown.
  double steady_iteration_time_s() const;
  // The entries after warm-up.
  std::vector<LogIteration> steady_iterations() const;
};

// What the caller knows about the run when the log does not say (torchtitan's iteration time
// needs the tokens per step and the GPU count); 0 = unknown. The log's own values win.
struct LogRunShape {
  std::int64_t tokens_per_step = 0;
  std::int64_t gpus = 0;
};

// Detects the format; throws Error("log:<file>:<line>", ...) on garbled / truncated / interleaved
// input, and when there is no iteration line.
TrainingLog parse_training_log(std::string_view text, const std::string& file, const LogRunShape& shape = {});

// The Error field of a line: "log:<file>:<line>".
std::string log_field(const std::string& file, std::size_t line);

// A log line after preprocessing: ANSI colour codes removed, torchrun's "[rank3]:" or
// "[default3]:" prefix split off (rank "" when there is none).
struct LogLine {
  std::size_t number = 0;
  std::string rank;
  std::string text;
};
std::string strip_ansi(std::string_view line);
LogLine split_rank_prefix(std::string_view line, std::size_t number);

// Leading entries the warm-up rule above drops (Error when none would remain).
constexpr double kWarmupFraction = 0.10;
std::size_t warmup_count(const std::vector<LogIteration>& iterations, bool megatron, const std::string& file);

}  // namespace tessera
