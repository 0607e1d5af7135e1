// Timeline -> Chrome Trace Event Format (the JSON that chrome://tracing and Perfetto open).
//
// Document: {"traceEvents": [...], "displayTimeUnit": "ms", "otherData": {...}}. Every operation
// is one complete event ("ph": "X", "cat": "compute") named "F mb3 c1" / "B mb3 c1" / "W mb3 c1"
// (kind, micro-batch, chunk) with args {stage, chunk, microbatch, critical}; "ts" and "dur" are
// microseconds (timeline times are seconds, x 1e6). One process (pid 1) with one track per
// pipeline stage, named "stage N" (tid = N + 1: Perfetto treats pid 0 and tid 0 as the kernel's
// idle task). Point-to-point transfers ("cat": "p2p", named "p2p F mb3 s0→s1") sit on tracks of
// their own per receiving stage, "p2p → stage N": transfers into one stage can overlap in time, so
// they are packed greedily into as few such tracks (lanes) as keep every track free of overlaps.
// Data-parallel gradient syncs ("cat": "dp-sync", named "dp-sync stage N") sit on a track per
// stage, "dp-sync stage N" (a sync may overlap the stage's last backward). Metadata events ("ph":
// "M") name the process and every track and order the tracks stage by stage.
//
// Track ids: stage s -> s + 1; its dp-sync track -> B + s; its p2p lanes k = 0, 1, ... ->
// (2 + k) B + s, where B = 1000 when there are fewer than 1000 stages, else the next power of ten.
#pragma once

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "schedule/pipeline_simulator.h"

namespace tessera {

// Events one trace holds at most, metadata included (~50 MB: an event is ~90-260 bytes). A
// timeline with more is cut to its earliest part: the longest prefix, in order of start, of its
// operations, transfers and syncs that fits with the metadata of the tracks it uses; otherData
// then holds "truncated": {"events_written", "events_total", "max_events", "events_before_s" (the
// first left-out event's start)}. Smaller traces are written whole, without that key.
inline constexpr std::size_t kMaxTraceEvents = 200'000;

struct TraceSize {
  std::size_t events_written = 0;
  std::size_t events_total = 0;  // the whole timeline's trace
  double kept_before_s = 0;      // truncated: every event starting before this is in the trace
  bool truncated() const { return events_written < events_total; }
};

struct TraceLabels {
  std::string process_name = "tessera pipeline";
  std::string schedule;  // recorded in otherData when not empty
};

nlohmann::json timeline_to_chrome_trace(const Timeline& timeline, const TraceLabels& labels = {});

// Writes the same document to `path`. Throws Error("trace", ...) when the file cannot be
// written.
TraceSize write_chrome_trace(const Timeline& timeline, const std::string& path, const TraceLabels& labels = {});

// The one stderr line a command prints when its trace was cut ("" when it was written whole).
std::string trace_truncation_note(const TraceSize& size);

}  // namespace tessera
