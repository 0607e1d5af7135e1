// tessera simulate: one iteration's pipeline, simulated event by event (schedule/pipeline_simulator.h).
//
//   tessera simulate --schedule gpipe|1f1b|interleaved|zb-h1 --stages P --microbatches M [--vpp V]
//                    [--fwd T --bwd T [--wgrad T]] [--costs FILE.json] [--p2p T]
//                    [--json [--ops]] [--trace OUT.json]
//
// Times are unitless (seconds by convention). --fwd / --bwd / --wgrad are one stage's times for one
// micro-batch over all its chunks; with --vpp V each chunk takes T / V. For zb-h1, --bwd is the
// input-gradient part and --wgrad the weight-gradient part; for the other schedules the backward
// is bwd + wgrad. --p2p (default 0) is every stage boundary's transfer time.
//
// --costs FILE.json gives the same settings, and more, in one object (every key optional, but
// schedule, stages, microbatches, fwd and bwd must come from the file or the command line; a value
// given on the command line replaces the file's; unknown keys are rejected):
//   {"schedule": "interleaved",          gpipe | 1f1b | interleaved | zb-h1
//    "stages": 4, "microbatches": 8, "vpp": 2,
//    "fwd":   1.0,                       a number: every stage, every micro-batch
//    "bwd":   [2.0, 2.0, 2.2, 2.5],      [P]: per stage
//    "wgrad": [[...8 numbers...], x 4],  [P][M]: per stage, per micro-batch (an entry of the outer
//                                        array may also be one number for all micro-batches)
//    "p2p": 0.01,                        a number, or [P] per boundary s -> s+1 with [P-1] the
//                                        wrap-around link P-1 -> 0 that interleaving uses; P-1
//                                        entries (no wrap) are accepted for the other schedules
//    "dp_sync": [0.5, 0.5, 0.5, 0.5],    optional: a number or [P], each stage's gradient sync
//    "dp_sync_overlap": true}            sync may start with the stage's last backward (default)
// fwd / bwd / wgrad values are a stage's time for one micro-batch over all its chunks, each chunk
// taking 1/vpp of it. Durations are 0 or finite from 1e-12 to 1e12.
//
// Output: a short table; --json one document {"schema_version", "schedule", "num_stages",
// "microbatches", "vpp", "makespan", "pipeline_makespan", "bubble_fraction", "critical_path_ops",
// "stages": [{"stage", "busy", "idle", "bubble_fraction", "peak_inflight"}]} and, with --ops,
// "ops": [{"stage", "chunk", "microbatch", "kind" (F|B|W), "start", "end"}]. --trace writes the
// Chrome Trace Event JSON (report/chrome_trace.h), which Perfetto and chrome://tracing open.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "cli/subcommands.h"
#include "core/error.h"
#include "formats/json_fields.h"
#include "formats/schema.h"
#include "report/chrome_trace.h"
#include "schedule/pipeline_schedule.h"
#include "schedule/pipeline_simulator.h"

namespace tessera::cli {

namespace {

using Json = nlohmann::json;

constexpr double kMaxDuration = 1e12;
// Times are unitless (seconds by convention); a non-zero duration below a picosecond is no
// operation any pipeline runs, and a denormal is a typo: refused rather than simulated as zero.
constexpr double kMinNonZeroDuration = 1e-12;
// --json --ops lists every operation in one JSON document built in memory (~0.5 KB an
// operation): beyond this many operations it is refused (the trace, capped, or the summary
// remain).
constexpr std::int64_t kMaxListedOps = 1'000'000;
constexpr const char* kSchedules = "gpipe, 1f1b, interleaved, zb-h1";

// A setting and the name its errors carry ("fwd" from the command line, "costs.fwd" from a file).
struct Setting {
  Json value;
  std::string field;
};
using Settings = std::map<std::string, Setting>;

std::string brief(const Json& j) {
  std::string text = json_fields::to_text(j);
  if (text.size() > 40) text = text.substr(0, 37) + "...";
  return text;
}

const Setting* find(const Settings& s, const std::string& key) {
  const auto it = s.find(key);
  return it == s.end() ? nullptr : &it->second;
}

std::int64_t to_int(const Setting& s) {
  const Json& v = s.value;
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isfinite(d) && std::fabs(d) < 9e15 && d == std::floor(d)) return static_cast<std::int64_t>(d);
  }
  throw Error(s.field, "expected an integer, got " + brief(v), "an integer");
}

double to_duration(const Json& v, const std::string& field) {
  constexpr const char* kAllowed = "0 or a number from 1e-12 to 1e12";
  if (!v.is_number() || v.is_boolean()) throw Error(field, "expected a number, got " + brief(v), kAllowed);
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < 0.0 || d > kMaxDuration || (d > 0.0 && d < kMinNonZeroDuration))
    throw Error(field, "got " + brief(v), kAllowed);
  return d;
}

// fwd / bwd / wgrad: a number, [P] or [P][M] of stage times over all chunks -> the simulator's
// [virtual stage * M + micro-batch] layout, each chunk taking 1/V.
std::vector<double> per_slot(const Setting& s, int p, int m, int v) {
  std::vector<double> out(static_cast<std::size_t>(p) * v * m);
  auto put = [&](int stage, int mb, double t) {
    for (int c = 0; c < v; ++c)
      out[(static_cast<std::size_t>(c) * p + stage) * m + mb] = t / static_cast<double>(v);
  };
  const std::string shapes = fmt::format("a number, {} per-stage values, or {} x {} per-stage per-micro-batch values", p, p, m);
  if (s.value.is_number()) {
    const double t = to_duration(s.value, s.field);
    for (int stage = 0; stage < p; ++stage)
      for (int mb = 0; mb < m; ++mb) put(stage, mb, t);
    return out;
  }
  if (!s.value.is_array()) throw Error(s.field, "expected a number or an array, got " + brief(s.value), shapes);
  if (s.value.size() != static_cast<std::size_t>(p))
    throw Error(s.field, fmt::format("has {} entries for {} stages", s.value.size(), p), shapes);
  for (int stage = 0; stage < p; ++stage) {
    const Json& row = s.value[static_cast<std::size_t>(stage)];
    const std::string row_field = fmt::format("{}[{}]", s.field, stage);
    if (row.is_number()) {
      const double t = to_duration(row, row_field);
      for (int mb = 0; mb < m; ++mb) put(stage, mb, t);
    } else if (row.is_array()) {
      if (row.size() != static_cast<std::size_t>(m))
        throw Error(row_field, fmt::format("has {} entries for {} micro-batches", row.size(), m),
                    fmt::format("{} values, one per micro-batch", m));
      for (int mb = 0; mb < m; ++mb)
        put(stage, mb, to_duration(row[static_cast<std::size_t>(mb)], fmt::format("{}[{}]", row_field, mb)));
    } else {
      throw Error(row_field, "expected a number or an array, got " + brief(row),
                  fmt::format("a number or {} values, one per micro-batch", m));
    }
  }
  return out;
}

// p2p / dp_sync: a number for every stage (boundary), or an array.
std::vector<double> per_stage(const Setting& s, int p, std::size_t min_entries, const std::string& shapes) {
  if (s.value.is_number()) return std::vector<double>(static_cast<std::size_t>(p), to_duration(s.value, s.field));
  if (!s.value.is_array()) throw Error(s.field, "expected a number or an array, got " + brief(s.value), shapes);
  const std::size_t n = s.value.size();
  if (n < min_entries || n > static_cast<std::size_t>(p))
    throw Error(s.field, fmt::format("has {} entries for {} stages", n, p), shapes);
  std::vector<double> out(static_cast<std::size_t>(p), 0.0);
  for (std::size_t i = 0; i < n; ++i) out[i] = to_duration(s.value[i], fmt::format("{}[{}]", s.field, i));
  return out;
}

std::string required_text(const char* option, const char* key) {
  return fmt::format("{} on the command line or \"{}\" in --costs", option, key);
}

PipelineCosts build_costs(const Settings& settings) {
  PipelineCosts c;
  const Setting* schedule = find(settings, "schedule");
  if (schedule == nullptr) throw Error("schedule", "missing", kSchedules);
  if (!schedule->value.is_string())
    throw Error(schedule->field, "expected a string, got " + brief(schedule->value), kSchedules);
  const std::string name = schedule->value.get<std::string>();
  try {
    c.schedule = parse_schedule(name);
  } catch (const Error&) {
    throw Error(schedule->field, "unknown schedule '" + name + "'", kSchedules);
  }

  auto count = [&](const char* key, const char* option, std::int64_t fallback) {
    const Setting* s = find(settings, key);
    if (s == nullptr) {
      if (fallback > 0) return fallback;
      throw Error(key, "missing", required_text(option, key));
    }
    return to_int(*s);
  };
  const std::int64_t p = count("stages", "--stages P", 0);
  const std::int64_t m = count("microbatches", "--microbatches M", 0);
  const std::int64_t v = count("vpp", "--vpp V", 1);
  // Names stages / microbatches / vpp, and bounds the op count (kMaxSimulatedOps).
  validate_schedule_shape(c.schedule, p, m, v);
  c.stages = static_cast<int>(p);
  c.microbatches = static_cast<int>(m);
  c.chunks = static_cast<int>(v);

  auto durations = [&](const char* key, const char* option) {
    const Setting* s = find(settings, key);
    if (s == nullptr) throw Error(key, "missing", required_text(option, key));
    return per_slot(*s, c.stages, c.microbatches, c.chunks);
  };
  c.forward_s = durations("fwd", "--fwd T");
  c.backward_s = durations("bwd", "--bwd T");
  if (const Setting* w = find(settings, "wgrad")) {
    std::vector<double> weight = per_slot(*w, c.stages, c.microbatches, c.chunks);
    if (c.schedule == Schedule::zb_h1) {
      c.weight_s = std::move(weight);
    } else {
      for (std::size_t i = 0; i < weight.size(); ++i) c.backward_s[i] += weight[i];
    }
  } else if (c.schedule == Schedule::zb_h1) {
    c.weight_s.assign(c.forward_s.size(), 0.0);
  }

  if (const Setting* link = find(settings, "p2p")) {
    // Interleaving also crosses the wrap-around link P-1 -> 0 (entry P-1); the others never do.
    const bool wrap_needed = c.schedule == Schedule::interleaved;
    c.p2p_s = per_stage(*link, c.stages, static_cast<std::size_t>(wrap_needed ? p : p - 1),
                        wrap_needed ? fmt::format("a number or {} values (boundary s -> s+1, the last {} -> 0)", p, p - 1)
                                    : fmt::format("a number, or {} values (boundary s -> s+1) or {} (the last, {} -> 0, unused)",
                                                  p - 1, p, p - 1));
  } else {
    c.p2p_s.assign(static_cast<std::size_t>(c.stages), 0.0);
  }
  if (const Setting* sync = find(settings, "dp_sync"))
    c.dp_sync_s = per_stage(*sync, c.stages, static_cast<std::size_t>(c.stages), fmt::format("a number or {} values, one per stage", p));
  if (const Setting* overlap = find(settings, "dp_sync_overlap")) {
    if (!overlap->value.is_boolean())
      throw Error(overlap->field, "expected true or false, got " + brief(overlap->value), "true, false");
    c.dp_sync_overlap = overlap->value.get<bool>();
  }
  c.validate();
  return c;
}

char kind_letter(OpKind kind) {
  switch (kind) {
    case OpKind::forward: return 'F';
    case OpKind::backward: return 'B';
    case OpKind::weight: return 'W';
  }
  return '?';
}

Json summary_json(const PipelineCosts& c, const Timeline& t, bool with_ops) {
  Json j{{"schema_version", kSchemaVersion},
         {"schedule", to_string(c.schedule)},
         {"num_stages", c.stages},
         {"microbatches", c.microbatches},
         {"vpp", c.chunks},
         {"makespan", t.makespan_s},
         {"pipeline_makespan", t.pipeline_makespan_s},
         {"bubble_fraction", t.bubble_fraction},
         {"critical_path_ops", t.critical_path.size()},
         {"stages", Json::array()}};
  for (std::size_t s = 0; s < t.stages.size(); ++s) {
    const StageSummary& st = t.stages[s];
    j["stages"].push_back({{"stage", s},
                           {"busy", st.busy_s},
                           {"idle", st.idle_s},
                           {"bubble_fraction", st.bubble_fraction},
                           {"peak_inflight", st.peak_inflight}});
  }
  if (with_ops) {
    Json ops = Json::array();
    for (const TimelineOp& op : t.ops)
      ops.push_back({{"stage", op.stage},
                     {"chunk", op.chunk},
                     {"microbatch", op.microbatch},
                     {"kind", std::string(1, kind_letter(op.kind))},
                     {"start", op.start_s},
                     {"end", op.end_s}});
    j["ops"] = std::move(ops);
  }
  return j;
}

void print_pipeline_table(const CommandOutput& io, const PipelineCosts& c, const Timeline& t, const std::string& trace) {
  io.print("schedule        {}  ({} stages x {} micro-batches, vpp {})\n", to_string(c.schedule), c.stages,
             c.microbatches, c.chunks);
  io.print("makespan        {:.6g}", t.makespan_s);
  if (t.makespan_s > t.pipeline_makespan_s) io.print("  (pipeline {:.6g} + DP sync)", t.pipeline_makespan_s);
  io.print("\nbubble          {:.1f}%  (mean idle fraction of the stages)\n", 100.0 * t.bubble_fraction);
  io.print("critical path   {} operations\n", t.critical_path.size());
  if (!trace.empty()) io.print("trace           {}  (Chrome trace: open in Perfetto)\n", trace);
  io.print("\n{:>6} {:>12} {:>12} {:>8} {:>15}\n", "stage", "busy", "idle", "bubble", "peak in-flight");
  for (std::size_t s = 0; s < t.stages.size(); ++s) {
    const StageSummary& st = t.stages[s];
    io.print("{:>6} {:>12.6g} {:>12.6g} {:>7.1f}% {:>15.4g}\n", s, st.busy_s, st.idle_s, 100.0 * st.bubble_fraction,
               st.peak_inflight);
  }
}

}  // namespace

void register_simulate(CLI::App& app, CommandRegistry& commands) {
  auto* sub = app.add_subcommand("simulate", "Simulate one iteration's pipeline schedule event by event");
  struct Options {
    std::string schedule, costs, trace;
    std::int64_t stages = 0, microbatches = 0, vpp = 1;
    double fwd = 0, bwd = 0, wgrad = 0, p2p = 0;
    bool json = false, ops = false;
    std::map<std::string, CLI::Option*> given;  // option -> CLI11 handle, to tell given from default
  };
  auto o = std::make_shared<Options>();
  o->given["schedule"] = sub->add_option("--schedule", o->schedule, "gpipe, 1f1b, interleaved or zb-h1");
  o->given["stages"] = sub->add_option("--stages", o->stages, "Pipeline stages P");
  o->given["microbatches"] = sub->add_option("--microbatches", o->microbatches, "Micro-batches M per iteration");
  o->given["vpp"] = sub->add_option("--vpp", o->vpp, "Model chunks per stage (interleaved); default 1");
  o->given["fwd"] = sub->add_option("--fwd", o->fwd, "One stage's forward time per micro-batch (all chunks)");
  o->given["bwd"] = sub->add_option("--bwd", o->bwd, "One stage's backward time (input-gradient part for zb-h1)");
  o->given["wgrad"] = sub->add_option("--wgrad", o->wgrad, "Weight-gradient time (zb-h1: its own W pass)");
  o->given["p2p"] = sub->add_option("--p2p", o->p2p, "Transfer time across each stage boundary; default 0");
  sub->add_option("--costs", o->costs, "Costs JSON (per stage / per micro-batch; see README)");
  auto* json_flag = sub->add_flag("--json", o->json, "Print one JSON summary");
  sub->add_flag("--ops", o->ops, "With --json: also list every operation")->needs(json_flag);
  sub->add_option("--trace", o->trace, "Write a Chrome trace (Perfetto) to this file");
  commands.add(sub, [o, &io = commands.output()]() {
    Settings settings;
    if (!o->costs.empty()) {
      const Json file = json_fields::parse_file(o->costs, "costs");
      json_fields::require_object(file, "costs");
      json_fields::reject_unknown_keys(file, "costs",
                                       {"schedule", "stages", "microbatches", "vpp", "fwd", "bwd", "wgrad", "p2p",
                                        "dp_sync", "dp_sync_overlap"});
      for (const auto& item : file.items())
        if (!item.value().is_null()) settings[item.key()] = {item.value(), "costs." + item.key()};
    }
    for (const auto& [key, option] : o->given) {
      if (option->count() == 0) continue;
      Json value;
      if (key == "schedule") value = o->schedule;
      else if (key == "stages") value = o->stages;
      else if (key == "microbatches") value = o->microbatches;
      else if (key == "vpp") value = o->vpp;
      else if (key == "fwd") value = o->fwd;
      else if (key == "bwd") value = o->bwd;
      else if (key == "wgrad") value = o->wgrad;
      else value = o->p2p;
      if (value.is_number_float() && !std::isfinite(value.get<double>()))
        throw Error(key, fmt::format("got {}", value.get<double>()), "0 or a number from 1e-12 to 1e12");
      settings[key] = {std::move(value), key};
    }
    const PipelineCosts costs = build_costs(settings);
    const std::int64_t ops = simulated_ops(costs.schedule, costs.stages, costs.microbatches, costs.chunks);
    if (o->ops && ops > kMaxListedOps)
      throw Error("ops", fmt::format("would list {} operations", ops),
                  fmt::format("--ops for at most {} operations (stages x microbatches x vpp x 2, or 3 for zb-h1); "
                              "--trace for larger runs",
                              kMaxListedOps));
    PipelineSimulator simulator;
    const Timeline timeline = simulator.run(costs);
    TraceSize trace;
    if (!o->trace.empty()) trace = write_chrome_trace(timeline, o->trace, {"tessera pipeline", to_string(costs.schedule)});
    if (o->json) io.print("{}\n", json_fields::to_text(summary_json(costs, timeline, o->ops), 2));
    else print_pipeline_table(io, costs, timeline, o->trace);
    io.print_error("{}", trace_truncation_note(trace));
    return 0;
  });
}

}  // namespace tessera::cli
