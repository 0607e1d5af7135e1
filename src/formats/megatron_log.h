// Megatron-LM log lines (formats of NVIDIA/Megatron-LM d98e8a64):
//  - iteration lines, megatron/training/training.py training_log:
//    " [<time>] iteration {:8d}/{:8d} | consumed samples: ... | elapsed time per iteration (ms): {:.1f} |
//      throughput per GPU (TFLOP/s/GPU): {:.1f} | ... | global batch size: {:5d} | lm loss: {:.6E} | ... |"
//    printed by the last rank (print_rank_last); each is the average over the log interval;
//  - the argument dump, megatron/training/arguments.py _print_args: a "---- arguments ----" line,
//    "  <dest> <dots to column 48> <value>" lines (sorted), a "---- end of arguments ----" line;
//  - memory reports, megatron/training/utils/common_utils.py report_memory:
//    "[Rank N] (after K iterations) memory (MB) | allocated: x | max allocated: x | reserved: x | max reserved: x".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/training_log.h"

namespace tessera {

// The line starts an iteration report ("iteration <n>/"), complete or not.
bool is_megatron_iteration_line(std::string_view text);
// Throws Error(log_field(file, line), ...) for a garbled or cut line.
LogIteration parse_megatron_iteration_line(std::string_view text, std::size_t line, const std::string& file);
// The iteration in Megatron's own format (for round trips); train_iters is the "/N" total.
std::string megatron_iteration_line(const LogIteration& iteration, std::int64_t train_iters);

// Reads the argument dump (into arguments, argument_lines, arguments_line) and the memory reports
// (peak_memory_gib) of the lines. A dump without its end line, a second dump, a value given twice
// or an unreadable memory report is an Error naming the line.
void read_megatron_context(const std::vector<LogLine>& lines, TrainingLog& log);

}  // namespace tessera
