#include "report/chrome_trace.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <numeric>
#include <vector>

#include <fmt/core.h>

#include "core/error.h"
#include "formats/json_fields.h"

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

// Events emit_events writes for this layout: process name, each stage's track, lane and sync
// names and sort indices (two each), then one per operation, transfer and sync.
std::size_t metadata_events(const Layout& l) {
  std::size_t n = 1 + 2 * l.lanes_per_stage.size();
  for (int lanes : l.lanes_per_stage) n += 2 * static_cast<std::size_t>(lanes);
  for (bool sync : l.has_sync) n += sync ? 2 : 0;
  return n;
}

std::size_t timed_events(const Timeline& t) { return t.ops.size() + t.p2p.size() + t.syncs.size(); }

// The longest prefix, in order of start (ties in emission order), of the timeline's operations,
// transfers and syncs whose trace (with the metadata of the tracks it uses) has at most
// kMaxTraceEvents events; kept_before_s is the first left-out event's start.
struct Truncated {
  Timeline kept;
  double kept_before_s = 0;
};

Truncated earliest_events(const Timeline& t) {
  struct Key {
    double start_s;
    std::size_t rank;  // ops, then transfers, then syncs, each in timeline order
  };
  const std::size_t n = timed_events(t), n_ops = t.ops.size(), n_p2p = t.p2p.size();
  auto key = [&](std::size_t rank) {
    if (rank < n_ops) return Key{t.ops[rank].start_s, rank};
    if (rank < n_ops + n_p2p) return Key{t.p2p[rank - n_ops].start_s, rank};
    return Key{t.syncs[rank - n_ops - n_p2p].start_s, rank};
  };
  // Only the kMaxTraceEvents earliest can be kept: find them in O(n), then sort those.
  std::vector<double> starts(n);
  for (std::size_t r = 0; r < n; ++r) starts[r] = key(r).start_s;
  const std::size_t candidates = std::min(n, kMaxTraceEvents);
  std::nth_element(starts.begin(), starts.begin() + static_cast<std::ptrdiff_t>(candidates - 1), starts.end());
  const double last_start_s = starts[candidates - 1];
  std::vector<double>().swap(starts);
  std::vector<Key> order;
  order.reserve(candidates + 1);
  for (std::size_t r = 0; r < n; ++r)
    if (key(r).start_s <= last_start_s) order.push_back(key(r));
  auto earlier = [](const Key& a, const Key& b) { return a.start_s != b.start_s ? a.start_s < b.start_s : a.rank < b.rank; };
  std::sort(order.begin(), order.end(), earlier);

  // Walk them in order, counting the metadata each new track adds, as layout_of lays them out
  // (lanes: the same greedy interval partitioning, in the same order).
  std::vector<char> keep(n, 0);
  std::size_t events = 1;  // process_name
  std::int64_t stages = 0;
  std::vector<std::vector<double>> lane_free;  // per receiving stage
  std::vector<char> has_sync;
  Truncated out;
  out.kept_before_s = t.makespan_s;
  for (const Key& k : order) {
    std::int64_t top = 0;  // highest stage the event names
    int new_lane = -1;
    std::size_t added = 1;
    if (k.rank < n_ops) {
      top = t.ops[k.rank].stage;
    } else if (k.rank < n_ops + n_p2p) {
      const P2pEvent& e = t.p2p[k.rank - n_ops];
      top = std::max(e.from_stage, e.to_stage);
      if (static_cast<std::size_t>(e.to_stage) >= lane_free.size()) lane_free.resize(static_cast<std::size_t>(e.to_stage) + 1);
      const auto& free = lane_free[static_cast<std::size_t>(e.to_stage)];
      std::size_t lane = 0;
      while (lane < free.size() && free[lane] > e.start_s) ++lane;
      new_lane = static_cast<int>(lane);
      added += lane == free.size() ? 2 : 0;
    } else {
      const SyncEvent& e = t.syncs[k.rank - n_ops - n_p2p];
      top = e.stage;
      if (static_cast<std::size_t>(e.stage) >= has_sync.size()) has_sync.resize(static_cast<std::size_t>(e.stage) + 1, 0);
      added += has_sync[static_cast<std::size_t>(e.stage)] ? 0 : 2;
    }
    added += 2 * static_cast<std::size_t>(std::max<std::int64_t>(0, top + 1 - stages));
    if (events + added > kMaxTraceEvents) {
      out.kept_before_s = k.start_s;
      break;
    }
    events += added;
    stages = std::max(stages, top + 1);
    keep[k.rank] = 1;
    if (new_lane >= 0) {
      auto& free = lane_free[static_cast<std::size_t>(t.p2p[k.rank - n_ops].to_stage)];
      const double end_s = t.p2p[k.rank - n_ops].end_s;
      if (static_cast<std::size_t>(new_lane) == free.size()) free.push_back(end_s);
      else free[static_cast<std::size_t>(new_lane)] = end_s;
    }
    if (k.rank >= n_ops + n_p2p) has_sync[static_cast<std::size_t>(t.syncs[k.rank - n_ops - n_p2p].stage)] = 1;
  }

  // The kept events in timeline order; the critical flags follow their operations.
  constexpr std::size_t kDropped = static_cast<std::size_t>(-1);
  std::vector<std::size_t> new_index(n_ops, kDropped);
  for (std::size_t i = 0; i < n_ops; ++i)
    if (keep[i]) {
      new_index[i] = out.kept.ops.size();
      out.kept.ops.push_back(t.ops[i]);
    }
  for (std::size_t i = 0; i < n_p2p; ++i)
    if (keep[n_ops + i]) out.kept.p2p.push_back(t.p2p[i]);
  for (std::size_t i = 0; i < t.syncs.size(); ++i)
    if (keep[n_ops + n_p2p + i]) out.kept.syncs.push_back(t.syncs[i]);
  for (std::size_t i : t.critical_path)
    if (i < n_ops && new_index[i] != kDropped) out.kept.critical_path.push_back(new_index[i]);
  return out;
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

// Lays the trace out and calls sink once per event; the whole timeline when its trace has at most
// kMaxTraceEvents events, else its earliest part (earliest_events), noted in otherData.
template <class Sink>
TraceSize emit_trace(const Timeline& timeline, const TraceLabels& labels, Json& other, Sink&& sink) {
  other = other_data(timeline, labels);
  Layout layout = layout_of(timeline);
  TraceSize size;
  size.events_total = metadata_events(layout) + timed_events(timeline);
  size.kept_before_s = timeline.makespan_s;
  if (size.events_total <= kMaxTraceEvents) {
    size.events_written = size.events_total;
    emit_events(timeline, labels, layout, sink);
    return size;
  }
  const Truncated part = earliest_events(timeline);
  layout = layout_of(part.kept);
  size.events_written = metadata_events(layout) + timed_events(part.kept);
  size.kept_before_s = part.kept_before_s;
  other["truncated"] = Json{{"events_written", size.events_written},
                            {"events_total", size.events_total},
                            {"max_events", kMaxTraceEvents},
                            {"events_before_s", part.kept_before_s}};
  emit_events(part.kept, labels, layout, sink);
  return size;
}

}  // namespace

nlohmann::json timeline_to_chrome_trace(const Timeline& timeline, const TraceLabels& labels) {
  Json events = Json::array();
  Json other;
  emit_trace(timeline, labels, other, [&](Json&& e) { events.push_back(std::move(e)); });
  return Json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}, {"otherData", std::move(other)}};
}

TraceSize write_chrome_trace(const Timeline& timeline, const std::string& path, const TraceLabels& labels) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("trace", "cannot open '" + path + "' for writing", "a writable file path");
  // Events go to a string first: otherData (which says whether the trace was cut) comes first.
  std::string events;
  bool first = true;
  Json other;
  const TraceSize size = emit_trace(timeline, labels, other, [&](Json&& e) {
    events += first ? "\n" : ",\n";
    events += json_fields::to_text(e);
    first = false;
  });
  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":" << json_fields::to_text(other) << ",\"traceEvents\":[" << events;
  out << "\n]}\n";
  out.flush();
  if (!out) throw Error("trace", "writing '" + path + "' failed", "a writable file path with free space");
  return size;
}

std::string trace_truncation_note(const TraceSize& size) {
  if (!size.truncated()) return "";
  return fmt::format("note: trace truncated to its first {} of {} events (those starting before {:.6g} s; at most {})\n",
                     size.events_written, size.events_total, size.kept_before_s, kMaxTraceEvents);
}

}  // namespace tessera
