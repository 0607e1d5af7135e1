// torchtitan log lines (formats of pytorch/torchtitan b5bcd76c):
//  - step lines, torchtitan/components/metrics.py MetricsProcessor.log:
//    "step: {:2}  loss: {:8.5f}  grad_norm: {:7.4f}  memory: {:5.2f}GiB({:.2f}%)  tps: {:,}  tflops: {:,.2f}  mfu: {:.2f}%"
//    (ANSI colours around each field; mfu "N/A" under quantisation; older releases lack grad_norm,
//    tflops or mfu). tps = tokens since the last log / (seconds x non-data-parallel size): tokens
//    per second per GPU. memory = max reserved since the last log (peak stats are reset per log).
//  - the mesh line, torchtitan/distributed/parallel_dims.py: "Building device mesh with parallelism:
//    pp=1, dp_replicate=1, dp_shard=8, cp=1, tp=1, ep=1" (older: "Building 1-D device mesh with
//    ['dp_shard'], [8]");
//  - the trainer line, torchtitan/trainer.py: "Trainer is initialized with N tokens per DP rank,
//    M tokens per train step, gradient accumulation steps G, maximum context length L, total steps S (warmup W)";
//  - with debug.print_config, "Running with configs: {<json>}" over the following lines.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/training_log.h"

namespace tessera {

// The line's message (after torchtitan's "[titan] <time> - root - INFO - " prefix) starts with "step:".
bool is_torchtitan_step_line(std::string_view text);
// iteration_time_s is left 0 (it needs the run's tokens per step); throws Error(log_field(...)).
LogIteration parse_torchtitan_step_line(std::string_view text, std::size_t line, const std::string& file);
// The step in torchtitan's format, colours off (for round trips).
std::string torchtitan_step_line(const LogIteration& iteration);

// One step's time from the logged tps: every GPU processes tokens_per_step / gpus tokens per step
// (each DP rank tokens_per_step / dp, tps divides by the non-DP size), so
// t = tokens_per_step / (gpus x tps). tps is printed rounded to an integer: relative error <= 0.5 / tps.
double torchtitan_iteration_time_s(std::int64_t tokens_per_step, std::int64_t gpus, double tokens_per_s_per_gpu);

// Reads the mesh, trainer and config lines into arguments / argument_lines (keys: pp,
// dp_replicate, dp_shard, cp, tp, ep, world_size, tokens_per_dp_rank, tokens_per_train_step,
// gradient_accumulation_steps, max_context_length, total_steps, and "section.key" from the config
// JSON) and peak_memory_gib from the step lines. Errors name the line.
void read_torchtitan_context(const std::vector<LogLine>& lines, TrainingLog& log);

}  // namespace tessera
