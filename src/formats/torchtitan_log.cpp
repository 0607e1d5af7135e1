#include "formats/torchtitan_log.h"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "formats/json_fields.h"
#include "hardware/cluster.h"

namespace tessera {

namespace {

constexpr std::string_view kInfo = " - INFO - ";  // tools/logging.py: "[titan] %(asctime)s - %(name)s - %(levelname)s - %(message)s"
constexpr std::size_t kMaxConfigLines = 5000;     // a printed config is a few hundred lines

// The logger message of a line (the whole line when it has no logger prefix).
std::string_view message(std::string_view text) {
  const std::size_t at = text.find(kInfo);
  return at == std::string_view::npos ? text : text.substr(at + kInfo.size());
}

std::optional<double> exact_number(std::string_view s) {
  double value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (s.empty() || ec != std::errc() || ptr != s.data() + s.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// Python's "{:,}" digits: groups of three after the first 1-3 ("7,282", "168,877").
std::optional<double> grouped_number(std::string_view s) {
  std::string digits;
  const std::size_t point = s.find('.');
  const std::string_view whole = s.substr(0, point);
  for (std::size_t i = 0; i < whole.size(); ++i) {
    const std::size_t from_end = whole.size() - i;  // characters left including this one
    if (from_end % 4 == 0) {
      if (whole[i] != ',' || i == 0) return std::nullopt;
      continue;
    }
    if (!std::isdigit(static_cast<unsigned char>(whole[i]))) return std::nullopt;
    digits += whole[i];
  }
  if (point != std::string_view::npos) digits += s.substr(point);
  return exact_number(digits);
}

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    const std::size_t start = i;
    while (i < s.size() && s[i] != ' ') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

[[noreturn]] void garbled_step_line(const std::string& file, std::size_t line, const std::string& what) {
  throw Error(log_field(file, line), what,
              "torchtitan's step line: \"step: N  loss: x  memory: xGiB(y%)  tps: n  tflops: x  mfu: x%\"");
}

// "37.24GiB(39.19%)" -> 37.24
std::optional<double> memory_gib(std::string_view v) {
  const std::size_t unit = v.find("GiB(");
  if (unit == std::string_view::npos || v.size() < unit + 6 || v.substr(v.size() - 2) != "%)") return std::nullopt;
  if (!exact_number(v.substr(unit + 4, v.size() - unit - 6))) return std::nullopt;
  return exact_number(v.substr(0, unit));
}

}  // namespace

bool is_torchtitan_step_line(std::string_view text) { return message(text).substr(0, 5) == "step:"; }

LogIteration parse_torchtitan_step_line(std::string_view text, std::size_t line, const std::string& file) {
  LogIteration it;
  it.line = line;
  const std::vector<std::string_view> w = words(message(text));
  if (w.size() % 2 != 0) garbled_step_line(file, line, "a field without its value: cut or garbled");
  bool has_step = false;
  for (std::size_t i = 0; i < w.size(); i += 2) {
    const std::string_view key = w[i], value = w[i + 1];
    if (key.size() < 2 || key.back() != ':') garbled_step_line(file, line, "'" + std::string(key) + "' is not a 'name:' field");
    const auto need = [&](std::optional<double> v) {
      if (!v) garbled_step_line(file, line, "unreadable value '" + std::string(value) + "' for " + std::string(key));
      return *v;
    };
    if (key == "step:") {
      std::int64_t step = 0;
      const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), step);
      if (ec != std::errc() || ptr != value.data() + value.size() || step < 1)
        garbled_step_line(file, line, "unreadable step '" + std::string(value) + "'");
      it.iteration = step;
      has_step = true;
    } else if (key == "loss:") {
      it.loss = need(exact_number(value));
    } else if (key == "memory:") {
      it.memory_gib = need(memory_gib(value));
    } else if (key == "tps:") {
      it.tokens_per_s_per_gpu = need(grouped_number(value));
    } else if (key == "tflops:") {
      it.tflops_per_gpu = need(grouped_number(value));
    } else if (key == "mfu:") {
      if (value != "N/A") {
        if (value.back() != '%') garbled_step_line(file, line, "mfu '" + std::string(value) + "' has no '%': cut");
        it.mfu_pct = need(exact_number(value.substr(0, value.size() - 1)));
      }
    } else if (key == "grad_norm:") {
      need(exact_number(value));
    }
  }
  if (!has_step || !it.tokens_per_s_per_gpu) garbled_step_line(file, line, "no 'tps:' field: cut or garbled");
  return it;
}

std::string torchtitan_step_line(const LogIteration& it) {
  std::string s = fmt::format("[rank0]:[titan] 2026-01-01 00:00:00,000 - root - INFO - step: {:2}  ", it.iteration);
  if (it.loss) s += fmt::format("loss: {:8.5f}  ", *it.loss);
  if (it.memory_gib) s += fmt::format("memory: {:5.2f}GiB(50.00%)  ", *it.memory_gib);
  // Python's "{:,}" of round(tps).
  const std::string digits = std::to_string(static_cast<std::int64_t>(std::llround(*it.tokens_per_s_per_gpu)));
  std::string tps;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) tps += ',';
    tps += digits[i];
  }
  s += "tps: " + tps;
  if (it.tflops_per_gpu) s += fmt::format("  tflops: {:.2f}", *it.tflops_per_gpu);
  if (it.mfu_pct) s += fmt::format("  mfu: {:.2f}%", *it.mfu_pct);
  return s;
}

double torchtitan_iteration_time_s(std::int64_t tokens_per_step, std::int64_t gpus, double tokens_per_s_per_gpu) {
  return static_cast<double>(tokens_per_step) / (static_cast<double>(gpus) * tokens_per_s_per_gpu);
}

namespace {

void set_argument(TrainingLog& log, const std::string& key, const std::string& value, std::size_t line) {
  const auto [it, inserted] = log.arguments.emplace(key, value);
  if (!inserted && it->second != value)
    throw Error(log_field(log.file, line), key + " is " + value + " here but " + it->second + " at line " +
                                               std::to_string(log.argument_lines[key]), "one run's log");
  if (inserted) log.argument_lines[key] = line;
}

std::int64_t positive_integer(std::string_view text, const TrainingLog& log, std::size_t line, const std::string& what) {
  std::int64_t value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() || value < 1)
    throw Error(log_field(log.file, line), "unreadable " + what + " '" + std::string(text) + "'", "a positive integer");
  return value;
}

// A mesh degree, and the running product of the degrees, at most a cluster's GPUs: the product
// of six int64 degrees would otherwise overflow (pp=2^33, dp_replicate=2^31 "is" 2^31 GPUs).
std::int64_t times_degree(std::int64_t world, std::int64_t degree, const TrainingLog& log, std::size_t line) {
  if (degree > kMaxClusterGpus || world > kMaxClusterGpus / degree)
    throw Error(log_field(log.file, line), fmt::format("the device mesh holds more than {} GPUs", kMaxClusterGpus),
                "mesh degrees whose product is a cluster's GPU count");
  return world * degree;
}

// "pp=1, dp_replicate=1, dp_shard=8, cp=1, tp=1, ep=1": each of the six once, nothing else.
void read_mesh(std::string_view m, const LogLine& l, TrainingLog& log) {
  constexpr std::string_view kKeys[] = {"pp", "dp_replicate", "dp_shard", "cp", "tp", "ep"};
  std::map<std::string, std::int64_t, std::less<>> degrees;
  std::stringstream entries{std::string(m)};
  for (std::string entry; std::getline(entries, entry, ',');) {
    const std::size_t first = entry.find_first_not_of(' '), equals = entry.find('=');
    const std::string key = equals == std::string::npos || first == std::string::npos ? entry : entry.substr(first, equals - first);
    if (std::find(std::begin(kKeys), std::end(kKeys), key) == std::end(kKeys))
      throw Error(log_field(log.file, l.number), "unknown mesh entry '" + key + "'", "pp, dp_replicate, dp_shard, cp, tp, ep");
    if (degrees.count(key) != 0) throw Error(log_field(log.file, l.number), "mesh entry " + key + " given twice", "each once");
    degrees[key] = positive_integer(entry.substr(equals + 1), log, l.number, key + "=");
  }
  std::int64_t world = 1;
  for (const std::string_view key : kKeys) {
    const auto it = degrees.find(key);
    if (it == degrees.end())
      throw Error(log_field(log.file, l.number), "mesh line without " + std::string(key) + "=", "torchtitan's mesh line");
    set_argument(log, std::string(key), std::to_string(it->second), l.number);
    if (key != "ep") world = times_degree(world, it->second, log, l.number);  // ep is carved from dp x cp x tp (parallel_dims.py)
  }
  set_argument(log, "world_size", std::to_string(world), l.number);
}

// "['dp_shard', 'tp'], [4, 2]" (torchtitan before 2025-10)
void read_old_mesh(std::string_view m, const LogLine& l, TrainingLog& log) {
  const std::size_t names_end = m.find(']'), sizes_at = m.find('[', names_end == std::string_view::npos ? 0 : names_end);
  if (m.substr(0, 1) != "[" || names_end == std::string_view::npos || sizes_at == std::string_view::npos || m.back() != ']')
    throw Error(log_field(log.file, l.number), "unreadable device-mesh line", "\"Building N-D device mesh with [names], [sizes]\"");
  std::vector<std::string> names;
  std::stringstream ns(std::string(m.substr(1, names_end - 1)));
  for (std::string n; std::getline(ns, n, ',');) {
    const std::size_t a = n.find('\''), b = n.rfind('\'');
    names.push_back(a == std::string::npos || b <= a ? n : n.substr(a + 1, b - a - 1));
  }
  std::stringstream ss(std::string(m.substr(sizes_at + 1, m.size() - sizes_at - 2)));
  std::int64_t world = 1;
  std::size_t i = 0;
  for (std::string s; std::getline(ss, s, ','); ++i) {
    while (!s.empty() && s.front() == ' ') s.erase(0, 1);
    const std::int64_t degree = positive_integer(s, log, l.number, "mesh size");
    if (i >= names.size()) throw Error(log_field(log.file, l.number), "more mesh sizes than names", "matching lists");
    set_argument(log, names[i], std::to_string(degree), l.number);
    world = times_degree(world, degree, log, l.number);
  }
  if (i != names.size()) throw Error(log_field(log.file, l.number), "fewer mesh sizes than names", "matching lists");
  set_argument(log, "world_size", std::to_string(world), l.number);
}

// "N tokens per DP rank, M tokens per train step, gradient accumulation steps G, maximum context
// length L, total steps S (warmup W)"
void read_trainer(std::string_view m, const LogLine& l, TrainingLog& log) {
  const auto before = [&](std::string_view tag, const char* key) {
    const std::size_t at = m.find(tag);
    if (at == std::string_view::npos) throw Error(log_field(log.file, l.number), "trainer line without '" + std::string(tag) + "'", "torchtitan's trainer line");
    std::size_t start = at;
    while (start > 0 && m[start - 1] != ' ') --start;
    set_argument(log, key, std::to_string(positive_integer(m.substr(start, at - start), log, l.number, key)), l.number);
  };
  const auto after = [&](std::string_view tag, const char* key) {
    const std::size_t at = m.find(tag);
    if (at == std::string_view::npos) throw Error(log_field(log.file, l.number), "trainer line without '" + std::string(tag) + "'", "torchtitan's trainer line");
    std::string_view v = m.substr(at + tag.size());
    v = v.substr(0, v.find_first_of(", "));
    set_argument(log, key, std::to_string(positive_integer(v, log, l.number, key)), l.number);
  };
  before(" tokens per DP rank", "tokens_per_dp_rank");
  before(" tokens per train step", "tokens_per_train_step");
  after("gradient accumulation steps ", "gradient_accumulation_steps");
  after("maximum context length ", "max_context_length");
}

void flatten(const nlohmann::json& j, const std::string& prefix, const LogLine& l, TrainingLog& log) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object()) flatten(*it, key, l, log);
    else set_argument(log, key, it->is_string() ? it->get<std::string>() : it->dump(), l.number);
  }
}

// Brackets opened and not yet closed in JSON text, outside strings; a line at a time, so finding
// where a printed config ends is linear in its length (re-parsing the growing text after every
// line was quadratic).
class BracketDepth {
 public:
  void scan(std::string_view text) {
    for (char c : text) {
      if (escaped_) escaped_ = false;
      else if (in_string_ && c == '\\') escaped_ = true;
      else if (c == '"') in_string_ = !in_string_;
      else if (!in_string_ && (c == '{' || c == '[')) ++open_, opened_ = true;
      else if (!in_string_ && (c == '}' || c == ']')) --open_;
    }
  }
  // The outermost value has opened and closed again (or closed more than it opened: garbled).
  bool closed() const { return opened_ && open_ <= 0; }

 private:
  std::int64_t open_ = 0;
  bool opened_ = false, in_string_ = false, escaped_ = false;
};

// "Running with configs: {" followed by the rest of json.dumps(indent=2) on the next lines,
// parsed once where its brackets close (json_fields::parse bounds its nesting, so flatten's
// recursion is bounded too).
std::size_t read_config(const std::vector<LogLine>& lines, std::size_t i, std::string_view first, TrainingLog& log) {
  std::string text(first);
  BracketDepth depth;
  depth.scan(first);
  for (std::size_t j = i;; ++j) {
    if (depth.closed()) {
      const nlohmann::json config = json_fields::parse(text, log_field(log.file, lines[i].number));
      // Found by fuzz_torchtitan_config: a config that is a number or a list has no keys to flatten.
      if (!config.is_object())
        throw Error(log_field(log.file, lines[i].number), "the printed config is not a JSON object",
                    "the {...} torchtitan prints after \"Running with configs:\"");
      flatten(config, "", lines[i], log);
      return j;
    }
    if (j + 1 >= lines.size() || j + 1 - i > kMaxConfigLines)
      throw Error(log_field(log.file, lines[i].number), "the printed config does not end: truncated or garbled",
                  "the JSON of \"Running with configs:\" complete");
    text += "\n" + lines[j + 1].text;
    depth.scan(lines[j + 1].text);
  }
}

}  // namespace

void read_torchtitan_context(const std::vector<LogLine>& lines, TrainingLog& log) {
  constexpr std::string_view kMesh = "Building device mesh with parallelism: ";
  constexpr std::string_view kConfig = "Running with configs: ";
  constexpr std::string_view kTrainer = "Trainer is initialized with ";
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const LogLine& l = lines[i];
    const std::string_view m = message(l.text);
    if (m.substr(0, kMesh.size()) == kMesh) read_mesh(m.substr(kMesh.size()), l, log);
    else if (m.substr(0, 9) == "Building " && m.find("-D device mesh with ") != std::string_view::npos)
      read_old_mesh(m.substr(m.find("-D device mesh with ") + 20), l, log);
    else if (m.substr(0, kTrainer.size()) == kTrainer) read_trainer(m.substr(kTrainer.size()), l, log);
    else if (m.substr(0, kConfig.size()) == kConfig) {
      if (log.arguments_line) throw Error(log_field(log.file, l.number), "a second printed config", "one run's log");
      log.arguments_line = l.number;
      i = read_config(lines, i, m.substr(kConfig.size()), log);
    }
  }
  for (const LogIteration& it : log.iterations)
    if (it.memory_gib) log.peak_memory_gib = std::max(log.peak_memory_gib.value_or(0.0), *it.memory_gib);
}

}  // namespace tessera
