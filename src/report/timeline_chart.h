// A pipeline timeline (Gantt chart: one row per stage, one box per op) as an HTML fragment.
//
// Design: a <canvas> drawn by a short inline script from compact embedded data, plus a static SVG
// summary (per row: the share of the makespan each op kind takes) that prints and needs no script.
// Why not pure SVG: a 64-stage x 1,024-micro-batch 1F1B run has ~131k ops; even one short <rect>
// per op is ~5 MB, and merging sub-pixel ops fixes one zoom level, so zooming in shows nothing
// new. The canvas keeps every op and redraws at any zoom (mouse wheel; drag pans; double-click
// resets; hovering names the op). The data: per row, ops sorted by start, each as three unsigned
// LEB128 varints of integer microseconds: zigzag(start - previous op's end) * 6 + kind, then
// zigzag deltas of duration and of micro-batch id against the previous op of the same kind. In a
// steady 1F1B schedule most of these are 0 or 1, so an op costs 3-5 bytes; the bytes travel as
// base64 in a data attribute. The 64 x 1,024 case with +/-5% jittered durations is 0.71 MB (test).
#pragma once

#include <span>
#include <string>
#include <vector>

namespace tessera::report {

enum class OpKind { forward, backward, weight_grad, p2p, dp_sync, other };
inline constexpr int kOpKindCount = 6;

struct TimelineOp {
  double start_s = 0;
  double duration_s = 0;
  OpKind kind = OpKind::forward;
  int micro_batch = 0;  // -1 when the op belongs to no micro-batch (dp-sync)
};

struct TimelineRow {
  std::string label;  // e.g. "stage 3"
  std::vector<TimelineOp> ops;
};

struct TimelineChart {
  std::string title;
  std::vector<TimelineRow> rows;
};

const char* op_kind_name(OpKind kind);

// One row's ops in the embedded format above (sorted by start first), base64-encoded.
std::string encode_timeline_ops(std::span<const TimelineOp> ops);

// The fragment: legend, canvas and its script, a <noscript> note and the SVG summary. Throws
// tessera::Error naming the field: "rows" (empty), "rows[i].ops[j].start_s" / ".duration_s"
// (negative, non-finite or beyond a million seconds), "rows[i].ops[j].micro_batch" (below -1).
std::string timeline_chart_html(const TimelineChart& chart);

}  // namespace tessera::report
