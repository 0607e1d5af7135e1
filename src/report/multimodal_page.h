// The multimodal `tessera plan --html` page, built from the command's --json document (every
// number shown is a field of it, json_number.h) and the simulated steps of the best disaggregated
// plan and of the monolithic layout: the strategies compared, the module groups of the
// disaggregated plan and their GPU counts as a picture, and the two timelines one above the other.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "report/timeline_chart.h"

namespace tessera::report {

struct MultimodalPageInputs {
  std::string title;
  std::optional<TimelineChart> disaggregated;  // the best disaggregated plan's step
  std::optional<TimelineChart> monolithic;     // the monolithic layout on every GPU
};

std::string multimodal_page_html(const nlohmann::json& doc, const MultimodalPageInputs& inputs);

}  // namespace tessera::report
