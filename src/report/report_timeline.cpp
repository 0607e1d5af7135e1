#include "report/report_timeline.h"

#include <algorithm>
#include <vector>

namespace tessera {

namespace {

report::OpKind kind_of(OpKind kind) {
  switch (kind) {
    case OpKind::forward:
      return report::OpKind::forward;
    case OpKind::backward:
      return report::OpKind::backward;
    case OpKind::weight:
      return report::OpKind::weight_grad;
  }
  return report::OpKind::other;
}

}  // namespace

report::TimelineChart report_timeline(const Timeline& timeline, std::string title) {
  report::TimelineChart chart;
  chart.title = std::move(title);
  chart.rows.resize(timeline.stages.size());
  for (std::size_t s = 0; s < chart.rows.size(); ++s) chart.rows[s].label = "stage " + std::to_string(s);
  for (const TimelineOp& op : timeline.ops)
    chart.rows.at(static_cast<std::size_t>(op.stage))
        .ops.push_back({op.start_s, op.end_s - op.start_s, kind_of(op.kind), op.microbatch});
  // A gradient sync overlapped with the backward pass would be drawn over its ops: only its
  // exposed part, after the stage's last op, is a box of its own.
  std::vector<double> last_end_s(chart.rows.size(), 0.0);
  for (const TimelineOp& op : timeline.ops)
    last_end_s[static_cast<std::size_t>(op.stage)] = std::max(last_end_s[static_cast<std::size_t>(op.stage)], op.end_s);
  for (const SyncEvent& sync : timeline.syncs) {
    const auto s = static_cast<std::size_t>(sync.stage);
    const double start_s = std::max(sync.start_s, last_end_s.at(s));
    if (sync.end_s > start_s) chart.rows[s].ops.push_back({start_s, sync.end_s - start_s, report::OpKind::dp_sync, -1});
  }
  return chart;
}

}  // namespace tessera
