// The `tessera estimate --html` page, built from the command's --json document (so every number
// shown is a field of it, json_number.h) and the simulated timeline of the same iteration:
// headline figures, the time breakdown as a bar, per-stage memory bars against usable memory, and
// the pipeline timeline (the same ops as the Perfetto trace).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "report/timeline_chart.h"

namespace tessera::report {

// doc: `tessera estimate --json` (with "stage_memory"); subtitle: e.g. the plan shorthand.
// Throws tessera::Error("report", ...) when the document lacks a field the page shows.
std::string estimate_page_html(const nlohmann::json& doc, const std::string& subtitle, const TimelineChart& timeline);

}  // namespace tessera::report
