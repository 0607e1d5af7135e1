// A simulated iteration (schedule/pipeline_simulator.h Timeline) as the report's timeline chart:
// one row per pipeline stage with its forward, backward and weight-gradient ops and its gradient
// sync's exposed part, as in the Perfetto trace (p2p transfers, drawn there as flows between
// stages, are left out: they overlap the compute of both rows).
#pragma once

#include <string>

#include "report/timeline_chart.h"
#include "schedule/pipeline_simulator.h"

namespace tessera {

report::TimelineChart report_timeline(const Timeline& timeline, std::string title);

}  // namespace tessera
