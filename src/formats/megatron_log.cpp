#include "formats/megatron_log.h"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <optional>

#include <fmt/core.h>

#include "core/checks.h"
#include "core/error.h"
#include "hardware/physical_ranges.h"

namespace tessera {

namespace {

constexpr double kMsPerS = 1000.0;
constexpr double kMibPerGib = 1024.0;  // report_memory prints MB = 2^20 bytes
constexpr std::size_t kDumpColumn = 48;  // _print_args: '.' * (48 - len(arg))
constexpr std::string_view kDumpStart = "------------------------ arguments ------------------------";
constexpr std::string_view kDumpEnd = "-------------------- end of arguments ---------------------";

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

std::optional<double> finite_number(std::string_view s) {
  s = trim(s);
  double value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(value) || s.empty()) return std::nullopt;
  return value;
}

std::optional<std::int64_t> integer(std::string_view s) {
  s = trim(s);
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

// Position just after the "iteration" of "iteration <spaces><digits>/", or npos.
std::size_t iteration_marker(std::string_view text) {
  for (std::size_t at = text.find("iteration"); at != std::string_view::npos; at = text.find("iteration", at + 1)) {
    const bool word_start = at == 0 || text[at - 1] == ' ' || text[at - 1] == ']';
    std::size_t i = at + 9;
    const std::size_t spaces = i;
    while (i < text.size() && text[i] == ' ') ++i;
    const std::size_t digits = i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    // "iteration <n>/" (or the line cut inside the number); "saved checkpoint at iteration <n> to" is not one.
    if (word_start && digits > spaces && i > digits && (i == text.size() || text[i] == '/')) return at + 9;
  }
  return std::string_view::npos;
}

// training.py's iteration line is the only one with this field; a line that has it but whose
// counter is unreadable is a garbled iteration line, refused rather than skipped.
constexpr std::string_view kIterationTimeKey = "elapsed time per iteration (ms)";

// Position just after the first word "iteration" (the counter follows), or npos.
std::size_t counter_start(std::string_view text) {
  for (std::size_t at = text.find("iteration"); at != std::string_view::npos; at = text.find("iteration", at + 1)) {
    const bool word_start = at == 0 || text[at - 1] == ' ' || text[at - 1] == ']';
    const bool word_end = at + 9 == text.size() || text[at + 9] == ' ';
    if (word_start && word_end) return at + 9;
  }
  return std::string_view::npos;
}

[[noreturn]] void garbled(const std::string& file, std::size_t line, const std::string& what) {
  throw Error(log_field(file, line), what,
              "Megatron-LM's iteration line: \"iteration N/M | ... | elapsed time per iteration (ms): T | ... |\"");
}

}  // namespace

bool is_megatron_iteration_line(std::string_view text) {
  return iteration_marker(text) != std::string_view::npos || text.find(kIterationTimeKey) != std::string_view::npos;
}

LogIteration parse_megatron_iteration_line(std::string_view text, std::size_t line, const std::string& file) {
  LogIteration it;
  it.line = line;
  const std::string_view body = trim(text);
  // Every field ends with " |" (training.py); a line cut anywhere lacks the last one.
  if (body.empty() || body.back() != '|') garbled(file, line, "the iteration line does not end with '|': truncated");
  const std::size_t start = counter_start(text);
  if (start == std::string_view::npos) garbled(file, line, "no 'iteration N/M' counter");
  std::string_view rest = text.substr(start);
  std::size_t bar = rest.find('|');
  const std::string_view counter = rest.substr(0, bar);
  const std::size_t slash = counter.find('/');
  const auto number = integer(counter.substr(0, slash));
  const auto total = slash == std::string_view::npos ? std::nullopt : integer(counter.substr(slash + 1));
  if (!number || !total || *number < 0 || *total < 1)
    garbled(file, line, "unreadable iteration counter '" + std::string(trim(counter)) + "'");
  it.iteration = *number;
  bool has_time = false;
  std::vector<std::string_view> keys;  // a field printed twice is a garbled line, not "the last wins"
  for (rest = rest.substr(bar + 1); !trim(rest).empty(); rest = rest.substr(bar + 1)) {
    bar = rest.find('|');
    const std::string_view field = rest.substr(0, bar);
    const std::size_t colon = field.rfind(':');
    if (colon == std::string_view::npos) garbled(file, line, "field '" + std::string(trim(field)) + "' has no ':'");
    const std::string_view key = trim(field.substr(0, colon)), value = field.substr(colon + 1);
    if (std::find(keys.begin(), keys.end(), key) != keys.end())
      garbled(file, line, "field '" + std::string(key) + "' printed twice");
    keys.push_back(key);
    const auto need = [&](std::optional<double> v) {
      if (!v) garbled(file, line, "unreadable number '" + std::string(trim(value)) + "' for " + std::string(key));
      return *v;
    };
    if (key == kIterationTimeKey) {
      const double elapsed_ms = need(finite_number(value));
      require_in_range(log_field(file, line) + "." + std::string(kIterationTimeKey), elapsed_ms,
                       physical::kMinStepTimeS * kMsPerS, physical::kMaxStepTimeS * kMsPerS, "ms");
      it.iteration_time_s = elapsed_ms / kMsPerS;
      has_time = true;
    } else if (key == "throughput per GPU (TFLOP/s/GPU)") {
      it.tflops_per_gpu = need(finite_number(value));
    } else if (key == "global batch size") {
      const auto gbs = integer(value);
      if (!gbs || *gbs <= 0) garbled(file, line, "unreadable global batch size '" + std::string(trim(value)) + "'");
      it.global_batch = *gbs;
    } else if (key == "lm loss") {
      it.loss = need(finite_number(value));
    }
  }
  if (!has_time) garbled(file, line, "no 'elapsed time per iteration (ms)' field");
  return it;
}

std::string megatron_iteration_line(const LogIteration& it, std::int64_t train_iters) {
  std::string s = fmt::format(" [2026-01-01 00:00:00.000000] iteration {:8d}/{:8d} |", it.iteration, train_iters);
  s += fmt::format(" elapsed time per iteration (ms): {:.1f} |", it.iteration_time_s * kMsPerS);
  if (it.tflops_per_gpu) s += fmt::format(" throughput per GPU (TFLOP/s/GPU): {:.1f} |", *it.tflops_per_gpu);
  if (it.global_batch) s += fmt::format(" global batch size: {:5d} |", *it.global_batch);
  if (it.loss) s += fmt::format(" lm loss: {:.6E} |", *it.loss);
  return s + " number of skipped iterations:   0 | number of nan iterations:   0 |";
}

namespace {

// "  <dest> <dots> <value>": the dest, and the value, or nullopt when the line is not a dump entry.
std::optional<std::pair<std::string, std::string>> dump_entry(std::string_view text, std::size_t line,
                                                              const std::string& file) {
  if (text.substr(0, 2) != "  " || text.size() < 3 || !(std::isalnum(static_cast<unsigned char>(text[2])) || text[2] == '_'))
    return std::nullopt;
  std::string_view rest = text.substr(2);
  const std::size_t space = rest.find(' ');
  const std::string name(rest.substr(0, space));
  if (space == std::string_view::npos)
    throw Error(log_field(file, line), "argument '" + name + "' without a value: truncated", "'  name ..... value'");
  rest = rest.substr(space + 1);
  std::size_t dots = 0;
  while (dots < rest.size() && rest[dots] == '.') ++dots;
  const std::size_t expected = name.size() < kDumpColumn ? kDumpColumn - name.size() : 0;
  if (dots != expected || rest.size() < dots + 1 || rest[dots] != ' ')
    throw Error(log_field(file, line), "argument line '" + name + "' is not in _print_args' form: garbled or cut",
                "'  name <dots to column 48> value'");
  return std::make_pair(name, std::string(trim(rest.substr(dots + 1))));
}

void read_memory_report(const LogLine& l, TrainingLog& log) {
  constexpr std::string_view kKey = "| max reserved:";
  const std::size_t at = l.text.find(kKey);
  std::optional<double> mib;
  if (at != std::string::npos) {
    std::string_view value = std::string_view(l.text).substr(at + kKey.size());
    value = value.substr(0, value.find('|'));
    mib = finite_number(value);
  }
  if (!mib || *mib < 0)
    throw Error(log_field(log.file, l.number), "unreadable memory report",
                "report_memory's \"memory (MB) | allocated: x | max allocated: x | reserved: x | max reserved: x\"");
  log.peak_memory_gib = std::max(log.peak_memory_gib.value_or(0.0), *mib / kMibPerGib);
}

}  // namespace

void read_megatron_context(const std::vector<LogLine>& lines, TrainingLog& log) {
  const LogLine* dump = nullptr;  // inside a dump: its start line
  for (const LogLine& l : lines) {
    const std::string_view t = trim(l.text);
    if (t == kDumpStart) {
      if (dump || log.arguments_line)
        throw Error(log_field(log.file, l.number), "a second argument dump", "one run's log (one dump)");
      dump = &l;
      log.arguments_line = l.number;
    } else if (dump && t == kDumpEnd) {
      dump = nullptr;
    } else if (dump) {
      if (l.rank != dump->rank) continue;  // another rank's output between the dump's lines
      const auto entry = dump_entry(l.text, l.number, log.file);
      if (!entry) continue;
      if (!log.arguments.emplace(entry->first, entry->second).second)
        throw Error(log_field(log.file, l.number), "argument '" + entry->first + "' printed twice", "one dump");
      log.argument_lines[entry->first] = l.number;
    } else if (l.text.find("memory (MB)") != std::string::npos && l.text.find("| allocated:") != std::string::npos) {
      read_memory_report(l, log);
    }
  }
  if (dump)
    throw Error(log_field(log.file, dump->number), "the argument dump has no end line: truncated",
                std::string("a dump closed by '") + std::string(kDumpEnd) + "'");
}

}  // namespace tessera
