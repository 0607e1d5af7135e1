// The `tessera validate --html` page, built from the command's --json document (every number shown
// is a field of it, json_number.h): predicted against measured iteration time on log-log axes with
// the diagonal and +/-10% bands, points coloured by accuracy class; the summary per class; the
// worst rows; every row, sortable.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace tessera::report {

// Rows listed as the worst (largest |error|).
inline constexpr std::size_t kWorstRows = 10;
// The band drawn around the diagonal.
inline constexpr double kValidationBandFraction = 0.10;

// doc: `tessera validate --json` (rows with "class"); subtitle: e.g. the CSV's path.
std::string validate_page_html(const nlohmann::json& doc, const std::string& subtitle);

}  // namespace tessera::report
