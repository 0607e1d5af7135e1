#include "io/chrome_trace.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <vector>

#include <fmt/core.h>

#include "core/error.h"

namespace tessera {

namespace {

using Json = nlohmann::json;

constexpr double kMicrosecondsPerSecond = 1e6;
constexpr int kPid = 1;  // not 0: Perfetto reserves pid 0 and tid 0 for the idle task
constexpr const char* kArrow = "\xe2\x86\x92";  // U+2192 RIGHTWARDS ARROW

double to_us(double seconds) { return seconds * kMicrosecondsPerSecond; }

char letter(OpKind kind) {
  switch (kind) {
    case OpKind::forward: return 'F';
    case OpKind::backward: return 'B';
    case OpKind::weight: return 'W';
  }
  return '?';
}

// A complete event [start_s, end_s); dur is taken as the difference of the converted ends so that
// ts + dur lands on the next event's ts when the two touch.
Json complete(std::string name, const char* category, std::int64_t tid, double start_s, double end_s, Json args) {
  const double ts = to_us(start_s);
  return Json{{"name", std::move(name)}, {"cat", category},    {"ph", "X"},          {"pid", kPid},
              {"tid", tid},              {"ts", ts},           {"dur", to_us(end_s) - ts}, {"args", std::move(args)}};
}

Json metadata(const char* what, std::int64_t tid, Json args) {
  return Json{{"name", what}, {"ph", "M"}, {"pid", kPid}, {"tid", tid}, {"args", std::move(args)}};
}

// Track layout (see the header).
struct Layout {
  std::int64_t base = 1000;
  std::vector<int> p2p_lane;              // per timeline p2p event
  std::vector<int> lanes_per_stage;       // p2p lanes into each stage
  std::vector<bool> has_sync;             // per stage
  std::int64_t per_stage_sort_slots = 2;  // compute track, p2p lanes, sync track

  static std::int64_t stage_tid(std::int64_t stage) { return stage + 1; }
  std::int64_t sync_tid(std::int64_t stage) const { return base + stage; }
  std::int64_t p2p_tid(std::int64_t stage, int lane) const { return (2 + lane) * base + stage; }
};

Layout layout_of(const Timeline& t) {
  Layout l;
  // Stages are those the summaries name, or any an event names (a hand-built timeline may lack
  // summaries).
  std::int64_t stages = static_cast<std::int64_t>(t.stages.size());
  for (const auto& op : t.ops) stages = std::max<std::int64_t>(stages, op.stage + 1);
  for (const auto& e : t.p2p) stages = std::max<std::int64_t>(stages, std::max(e.from_stage, e.to_stage) + 1);
  for (const auto& s : t.syncs) stages = std::max<std::int64_t>(stages, s.stage + 1);
  while (l.base <= stages) l.base *= 10;  // stage tids 1..stages stay below it
  const auto n = static_cast<std::size_t>(stages);
  l.lanes_per_stage.assign(n, 0);
  l.has_sync.assign(n, false);
  for (const auto& s : t.syncs) l.has_sync[static_cast<std::size_t>(s.stage)] = true;

  // Interval partitioning per receiving stage: in order of start, each transfer takes the first
  // lane that is free by then (optimal: as many lanes as transfers ever overlap).
  std::vector<std::size_t> order(t.p2p.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    const P2pEvent &x = t.p2p[a], &y = t.p2p[b];
    return x.to_stage != y.to_stage ? x.to_stage < y.to_stage : x.start_s < y.start_s;
  });
  l.p2p_lane.assign(t.p2p.size(), 0);
  std::vector<double> lane_free;
  std::int32_t current = -1;
  for (std::size_t i : order) {
    const P2pEvent& e = t.p2p[i];
    if (e.to_stage != current) {
      current = e.to_stage;
      lane_free.clear();
    }
    std::size_t lane = 0;
    while (lane < lane_free.size() && lane_free[lane] > e.start_s) ++lane;
    if (lane == lane_free.size()) lane_free.push_back(e.end_s);
    else lane_free[lane] = e.end_s;
    l.p2p_lane[i] = static_cast<int>(lane);
    auto& count = l.lanes_per_stage[static_cast<std::size_t>(e.to_stage)];
    count = std::max(count, static_cast<int>(lane) + 1);
  }
  int max_lanes = 0;
  for (int c : l.lanes_per_stage) max_lanes = std::max(max_lanes, c);
  l.per_stage_sort_slots = 2 + max_lanes;
  return l;
}

// Calls sink(Json&&) once per event, metadata first, then operations stage by stage, transfers,
// syncs.
template <class Sink>
void emit_events(const Timeline& t, const TraceLabels& labels, const Layout& l, Sink&& sink) {
  sink(metadata("process_name", Layout::stage_tid(0), {{"name", labels.process_name}}));
  const auto stages = static_cast<std::int64_t>(l.lanes_per_stage.size());
  for (std::int64_t s = 0; s < stages; ++s) {
    const std::int64_t sort = s * l.per_stage_sort_slots;
    sink(metadata("thread_name", Layout::stage_tid(s), {{"name", fmt::format("stage {}", s)}}));
    sink(metadata("thread_sort_index", Layout::stage_tid(s), {{"sort_index", sort}}));
    for (int lane = 0; lane < l.lanes_per_stage[static_cast<std::size_t>(s)]; ++lane) {
      const std::string name = lane == 0 ? fmt::format("p2p {} stage {}", kArrow, s)
                                         : fmt::format("p2p {} stage {} ({})", kArrow, s, lane + 1);
      sink(metadata("thread_name", l.p2p_tid(s, lane), {{"name", name}}));
      sink(metadata("thread_sort_index", l.p2p_tid(s, lane), {{"sort_index", sort + 1 + lane}}));
    }
    if (l.has_sync[static_cast<std::size_t>(s)]) {
      sink(metadata("thread_name", l.sync_tid(s), {{"name", fmt::format("dp-sync stage {}", s)}}));
      sink(metadata("thread_sort_index", l.sync_tid(s), {{"sort_index", sort + l.per_stage_sort_slots - 1}}));
    }
  }

  std::vector<bool> critical(t.ops.size(), false);
  for (std::size_t i : t.critical_path)
    if (i < critical.size()) critical[i] = true;
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    const TimelineOp& op = t.ops[i];
    sink(complete(fmt::format("{} mb{} c{}", letter(op.kind), op.microbatch, op.chunk), "compute", Layout::stage_tid(op.stage),
                  op.start_s, op.end_s,
                  {{"stage", op.stage}, {"chunk", op.chunk}, {"microbatch", op.microbatch}, {"critical", critical[i]}}));
  }
  for (std::size_t i = 0; i < t.p2p.size(); ++i) {
    const P2pEvent& e = t.p2p[i];
    sink(complete(fmt::format("p2p {} mb{} s{}{}s{}", letter(e.kind), e.microbatch, e.from_stage, kArrow, e.to_stage),
                  "p2p", l.p2p_tid(e.to_stage, l.p2p_lane[i]), e.start_s, e.end_s,
                  {{"from_stage", e.from_stage},
                   {"to_stage", e.to_stage},
                   {"chunk", e.chunk},
                   {"microbatch", e.microbatch},
                   {"payload", e.kind == OpKind::forward ? "activation" : "gradient"}}));
  }
  for (const SyncEvent& e : t.syncs)
    sink(complete(fmt::format("dp-sync stage {}", e.stage), "dp-sync", l.sync_tid(e.stage), e.start_s, e.end_s,
                  {{"stage", e.stage}}));
}

Json other_data(const Timeline& t, const TraceLabels& labels) {
  Json j{{"generator", "tessera"},
         {"time_unit", "s"},
         {"stages", t.stages.size()},
         {"makespan_s", t.makespan_s},
         {"pipeline_makespan_s", t.pipeline_makespan_s},
         {"bubble_fraction", t.bubble_fraction}};
  if (!labels.schedule.empty()) j["schedule"] = labels.schedule;
  return j;
}

std::string dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

}  // namespace

nlohmann::json timeline_to_chrome_trace(const Timeline& timeline, const TraceLabels& labels) {
  Json events = Json::array();
  const Layout layout = layout_of(timeline);
  emit_events(timeline, labels, layout, [&](Json&& e) { events.push_back(std::move(e)); });
  return Json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}, {"otherData", other_data(timeline, labels)}};
}

void write_chrome_trace(const Timeline& timeline, const std::string& path, const TraceLabels& labels) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("trace", "cannot open '" + path + "' for writing", "a writable file path");
  const Layout layout = layout_of(timeline);
  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":" << dump(other_data(timeline, labels)) << ",\"traceEvents\":[";
  bool first = true;
  emit_events(timeline, labels, layout, [&](Json&& e) {
    out << (first ? "\n" : ",\n") << dump(e);
    first = false;
  });
  out << "\n]}\n";
  out.flush();
  if (!out) throw Error("trace", "writing '" + path + "' failed", "a writable file path with free space");
}

}  // namespace tessera
