// The `tessera plan --html` page, built from the command's --json document (every number shown is
// a field of it, json_number.h), every feasible plan's time and memory from the search, and the
// winner's launch script: the top plans (sortable, with each one's confidence), a scatter of
// every feasible plan's step time against peak memory with the exact Pareto front and the winner
// marked (thinned for drawing, the front kept whole), the top plans' time breakdowns side by side.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/pareto_front.h"

namespace tessera::report {

// Most points the scatter draws (the rest are thinned by pareto_front.h's grid; the front is
// always drawn whole): about 100 bytes each, so the page stays far below 2 MB.
inline constexpr std::size_t kMaxScatterPoints = 4000;

struct PlanPageInputs {
  std::string title;                   // e.g. "Tessera plan: llama3-8b on 16 x h100-sxm-80gb"
  std::string subtitle;                // e.g. the search request
  std::vector<Point2> feasible;        // x: peak memory (GiB), y: step time (s), closed form
  std::string launch_script;           // the winner's, empty when nothing fits
};

std::string plan_page_html(const nlohmann::json& doc, const PlanPageInputs& inputs);

}  // namespace tessera::report
