// Numbers a report shows, taken from the command's --json document by path, so every number on a
// page is a JSON field by construction and says which: a cell or span carries data-json (the
// path), data-value (the value, exact) and data-scale (what it is multiplied by for display, e.g.
// 100 for a fraction shown in percent). Paths: keys joined by ".", array indices as "[i]"
// ("rows[3].error_pct", "breakdown.compute_s").
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "report/html_page.h"

namespace tessera::report {

// Decimals the pages show: seconds, GiB, percentages (a fraction x kPercent), and measured values
// in their metric's unit.
inline constexpr int kSecondsDecimals = 3;
inline constexpr int kGibDecimals = 2;
inline constexpr int kPercentDecimals = 1;
inline constexpr int kValueDecimals = 3;
inline constexpr double kPercent = 100.0;

// The number at `path`. Throws tessera::Error("report", ...) naming the path when it is missing
// or not a number (a page asking for a field its document lacks is a bug, said plainly).
double json_number(const nlohmann::json& doc, std::string_view path);
// The element at `path` (any type), same errors.
const nlohmann::json& json_at(const nlohmann::json& doc, std::string_view path);

// A table cell showing value x scale with `decimals` decimals and an optional unit ("%", " s").
HtmlCell json_cell(const nlohmann::json& doc, std::string path, int decimals, double scale = 1,
                   std::string_view unit = "");
// The same as an inline <span> (for prose and headlines).
std::string json_span(const nlohmann::json& doc, std::string path, int decimals, double scale = 1,
                      std::string_view unit = "");
// A text cell (not a number).
HtmlCell text_cell(std::string text);

}  // namespace tessera::report
