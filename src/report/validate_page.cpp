#include "report/validate_page.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "report/html_page.h"
#include "report/json_number.h"
#include "report/scatter_chart.h"

namespace tessera::report {

namespace {

std::string row_path(std::size_t i, const char* key) { return "rows[" + std::to_string(i) + "]." + key; }

std::string scatter_section(const nlohmann::json& doc) {
  const nlohmann::json& rows = json_at(doc, "rows");
  ScatterChart chart;
  chart.title = "Predicted vs measured iteration time";
  chart.x_label = "measured (s)";
  chart.y_label = "predicted (s)";
  chart.x_scale = AxisScale::log10;
  chart.y_scale = AxisScale::log10;
  chart.diagonal_band_fraction = kValidationBandFraction;
  for (std::size_t i = 0; i < rows.size(); ++i)
    chart.points.push_back({json_number(doc, row_path(i, "measured_time_s")),
                            json_number(doc, row_path(i, "predicted_time_s")),
                            rows[i].value("class", std::string("other")), rows[i].value("id", std::string())});
  return chart_figure("predicted-vs-measured", scatter_chart_svg(chart));
}

std::string validation_summary_section(const nlohmann::json& doc) {
  HtmlTable t{{"rows", "n", "median |error| %", "p90 |error| %", "max |error| %"}, {}};
  auto add = [&](const std::string& name, const std::string& at) {
    t.rows.push_back({text_cell(name), json_cell(doc, at + "n", 0),
                      json_cell(doc, at + "median_abs_error_pct", kPercentDecimals),
                      json_cell(doc, at + "p90_abs_error_pct", kPercentDecimals),
                      json_cell(doc, at + "max_abs_error_pct", kPercentDecimals)});
  };
  add("all", "summary.");
  const nlohmann::json& classes = json_at(doc, "summary.classes");
  for (std::size_t k = 0; k < classes.size(); ++k)
    add(classes[k].value("class", std::string()), "summary.classes[" + std::to_string(k) + "].");
  return html_table(t);
}

HtmlTable rows_table(const nlohmann::json& doc, const std::vector<std::size_t>& order) {
  HtmlTable t{{"id", "class", "metric", "measured", "predicted", "error %"}, {}};
  const nlohmann::json& rows = json_at(doc, "rows");
  for (std::size_t i : order)
    t.rows.push_back({text_cell(rows[i].value("id", std::string())), text_cell(rows[i].value("class", std::string())),
                      text_cell(rows[i].value("metric", std::string())),
                      json_cell(doc, row_path(i, "measured"), kValueDecimals),
                      json_cell(doc, row_path(i, "predicted"), kValueDecimals),
                      json_cell(doc, row_path(i, "error_pct"), kPercentDecimals)});
  return t;
}

std::vector<std::size_t> worst_first(const nlohmann::json& doc) {
  const std::size_t n = json_at(doc, "rows").size();
  std::vector<double> abs_error(n);
  for (std::size_t i = 0; i < n; ++i) abs_error[i] = std::fabs(json_number(doc, row_path(i, "error_pct")));
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return abs_error[a] > abs_error[b]; });
  order.resize(std::min(order.size(), kWorstRows));
  return order;
}

}  // namespace

std::string validate_page_html(const nlohmann::json& doc, const std::string& subtitle) {
  const std::size_t n = json_at(doc, "rows").size();
  HtmlPage page("validate", "Tessera validate: " + std::to_string(n) + " measured runs", subtitle);
  page.add_section("Summary", validation_summary_section(doc));
  if (n > 0) page.add_section("Predicted vs measured", scatter_section(doc));
  page.add_section("Worst rows", html_table(rows_table(doc, worst_first(doc))));
  std::vector<std::size_t> all(n);
  std::iota(all.begin(), all.end(), std::size_t{0});
  page.add_section("Every row", html_table(rows_table(doc, all)));
  return page.to_string();
}

}  // namespace tessera::report
