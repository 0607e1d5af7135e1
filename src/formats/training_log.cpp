#include "formats/training_log.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "core/error.h"
#include "core/percentile.h"
#include "formats/integer_text.h"
#include "formats/megatron_log.h"
#include "formats/torchtitan_log.h"

namespace tessera {

namespace {

constexpr const char* kMegatron = "megatron-lm";
constexpr const char* kTorchtitan = "torchtitan";

std::vector<LogLine> split_lines(std::string_view text) {
  std::vector<LogLine> lines;
  std::size_t start = 0, number = 1;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(split_rank_prefix(strip_ansi(line), number++));
    start = end + 1;
  }
  return lines;
}

// Which entries are present: a log's lines share one format, so a line with fewer fields than
// the first is cut or garbled.
unsigned field_mask(const LogIteration& it) {
  return (it.tflops_per_gpu ? 1u : 0u) | (it.mfu_pct ? 2u : 0u) | (it.tokens_per_s_per_gpu ? 4u : 0u) |
         (it.memory_gib ? 8u : 0u) | (it.loss ? 16u : 0u) | (it.global_batch ? 32u : 0u);
}

// Iteration lines of one run from one rank, numbered upwards.
void check_sequence(const LogLine& line, const LogIteration& it, const LogLine*& first, const TrainingLog& log) {
  if (!first) {
    first = &line;
    return;
  }
  if (line.rank != first->rank)
    throw Error(log_field(log.file, line.number),
                "iteration lines of a second rank (" + (line.rank.empty() ? std::string("no prefix") : line.rank) +
                    " after " + (first->rank.empty() ? std::string("no prefix") : first->rank) + " at line " +
                    std::to_string(first->number) + "): the log interleaves ranks",
                "one rank's log (torchrun --local-ranks-filter / --log-dir; Megatron prints them on the last rank)");
  const LogIteration& previous = log.iterations.back();
  if (it.iteration <= previous.iteration)
    throw Error(log_field(log.file, line.number),
                "iteration " + std::to_string(it.iteration) + " after iteration " + std::to_string(previous.iteration) +
                    " at line " + std::to_string(previous.line) + ": interleaved ranks or a restarted run",
                "one rank's log of one run, iterations increasing");
  if (field_mask(it) != field_mask(log.iterations.front()))
    throw Error(log_field(log.file, line.number), "the line has other fields than the first iteration line (line " +
                                                      std::to_string(log.iterations.front().line) + "): cut or garbled",
                "complete iteration lines of one format");
}

void derive_torchtitan_times(TrainingLog& log, const LogRunShape& shape) {
  const auto known = [&](const char* key, std::int64_t fallback) -> std::int64_t {
    const auto it = log.arguments.find(key);
    return it == log.arguments.end() ? fallback
                                     : parse_integer(it->second, log_field(log.file, log.arguments_line) + "." + key);
  };
  std::int64_t tokens = known("tokens_per_train_step", shape.tokens_per_step);
  const std::int64_t gpus = known("world_size", shape.gpus);
  if (tokens <= 0 || gpus <= 0) return;  // steady_iteration_time_s names what is missing
  for (LogIteration& it : log.iterations) {
    if (*it.tokens_per_s_per_gpu <= 0)
      throw Error(log_field(log.file, it.line), "tps is 0: no iteration time", "a positive tps");
    it.iteration_time_s = torchtitan_iteration_time_s(tokens, gpus, *it.tokens_per_s_per_gpu);
  }
}

}  // namespace

std::string log_field(const std::string& file, std::size_t line) {
  return "log:" + file + ":" + std::to_string(line);
}

std::string strip_ansi(std::string_view line) {
  std::string out;
  out.reserve(line.size());
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line[i] == '\x1b' && i + 1 < line.size() && line[i + 1] == '[') {
      // CSI: parameters and intermediates up to a final byte in @..~ (ECMA-48 §5.4).
      std::size_t j = i + 2;
      while (j < line.size() && !(line[j] >= '@' && line[j] <= '~')) ++j;
      i = j;
      continue;
    }
    out += line[i];
  }
  return out;
}

LogLine split_rank_prefix(std::string_view line, std::size_t number) {
  LogLine out{number, "", std::string(line)};
  // torchrun --tee / --log-dir: "[rank3]:" (PyTorch >= 2.3) or "[default3]:" (the role name).
  for (const std::string_view tag : {std::string_view("[rank"), std::string_view("[default")}) {
    if (line.substr(0, tag.size()) != tag) continue;
    std::size_t i = tag.size();
    while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i]))) ++i;
    if (i == tag.size() || line.substr(i, 2) != "]:") continue;
    out.rank = std::string(line.substr(0, i + 1));
    out.text = std::string(line.substr(i + 2));
    break;
  }
  return out;
}

std::size_t warmup_count(const std::vector<LogIteration>& its, bool megatron, const std::string& file) {
  if (its.empty()) throw Error("log:" + file, "no iteration line", "a training log with iteration lines");
  std::size_t drop = 1;  // rule 1
  if (megatron && its.size() >= 2) {  // rule 2
    const std::int64_t interval = its.back().iteration - its[its.size() - 2].iteration;
    if (interval > 0 && its.front().iteration % interval != 0) drop = 2;
  }
  const double limit = kWarmupFraction * static_cast<double>(its.back().iteration);  // rule 3
  while (drop < its.size() && static_cast<double>(its[drop].iteration) <= limit) ++drop;
  // Rule 4: the batch ramp-up.
  std::size_t last_change = 0;
  for (std::size_t i = 1; i < its.size(); ++i) {
    if (its[i].global_batch == its[i - 1].global_batch) continue;
    for (std::size_t j = 0; j < i; ++j)
      if (its[j].global_batch == its[i].global_batch)
        throw Error(log_field(file, its[i].line), "the global batch size returns to an earlier value",
                    "one ramp-up (Megatron --rampup-batch-size), then a fixed batch");
    last_change = i;
  }
  drop = std::max(drop, last_change);
  if (drop >= its.size())
    throw Error(log_field(file, its.back().line),
                "no iteration left after the warm-up rule (" + std::to_string(its.size()) + " logged)",
                "a log with iterations after the first logged one and after 10% of the run");
  return drop;
}

std::vector<LogIteration> TrainingLog::steady_iterations() const {
  return {iterations.begin() + static_cast<std::ptrdiff_t>(std::min(warmup_iterations, iterations.size())),
          iterations.end()};
}

double TrainingLog::steady_iteration_time_s() const {
  std::vector<double> times;
  for (const LogIteration& it : steady_iterations()) {
    if (!(it.iteration_time_s > 0))
      throw Error(log_field(file, it.line), "the iteration time is unknown",
                  "a torchtitan log with its mesh and trainer lines, or the run's tokens per step and GPU count");
    times.push_back(it.iteration_time_s);
  }
  if (times.empty()) throw Error("log:" + file, "no steady iteration", "a log with iterations after warm-up");
  return median(std::move(times));
}

TrainingLog parse_training_log(std::string_view text, const std::string& file, const LogRunShape& shape) {
  TrainingLog log;
  log.file = file;
  const std::vector<LogLine> lines = split_lines(text);
  const bool cut_at_end = !text.empty() && text.back() != '\n';
  const LogLine* first = nullptr;
  for (const LogLine& line : lines) {
    const bool megatron = is_megatron_iteration_line(line.text);
    const bool titan = !megatron && is_torchtitan_step_line(line.text);
    if (!megatron && !titan) continue;
    const char* format = megatron ? kMegatron : kTorchtitan;
    if (log.format.empty()) log.format = format;
    if (log.format != format)
      throw Error(log_field(file, line.number), std::string("a ") + format + " line in a " + log.format + " log",
                  "one framework's log");
    LogIteration it = megatron ? parse_megatron_iteration_line(line.text, line.number, file)
                               : parse_torchtitan_step_line(line.text, line.number, file);
    check_sequence(line, it, first, log);
    log.iterations.push_back(it);
  }
  if (log.iterations.empty())
    throw Error("log:" + file + ":" + std::to_string(lines.size()), "no Megatron-LM iteration line or torchtitan step line",
                "a log with \"iteration N/M | ... elapsed time per iteration (ms)\" or \"step: N ... tps:\" lines");
  // A file cut inside its last iteration line: the line can look complete ("tps: 7"), so a last
  // iteration line without its newline is refused.
  if (cut_at_end && log.iterations.back().line == lines.size())
    throw Error(log_field(file, lines.size()), "the log ends inside this iteration line (no newline): truncated",
                "a complete log (its last line ends with a newline)");
  if (log.format == kMegatron) {
    read_megatron_context(lines, log);
  } else {
    read_torchtitan_context(lines, log);
    derive_torchtitan_times(log, shape);
  }
  log.warmup_iterations = warmup_count(log.iterations, log.format == kMegatron, file);
  return log;
}

}  // namespace tessera
