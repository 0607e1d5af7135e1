#include "report/plan_page.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "report/bar_chart.h"
#include "report/breakdown_terms.h"
#include "report/html_page.h"
#include "report/html_text.h"
#include "report/json_number.h"
#include "report/scatter_chart.h"

namespace tessera::report {

namespace {

std::string plan_path(std::size_t i, const std::string& key) { return "plans[" + std::to_string(i) + "]." + key; }

// The layout keys every row shows, first and in this order; the rest follow alphabetically.
constexpr const char* kLayoutKeys[] = {"tp", "pp", "dp", "cp", "ep", "vpp", "mb"};
constexpr const char* kAlwaysShown[] = {"tp", "pp", "dp", "mb"};

std::string key_value(const nlohmann::json& plan, const std::string& key) {
  const nlohmann::json& v = plan.at(key);
  return key + "=" + (v.is_string() ? v.get<std::string>() : v.is_boolean() ? (v.get<bool>() ? "1" : "0") : v.dump());
}

// Every key of the plans' documents, in the order the page shows them.
std::vector<std::string> plan_keys(const nlohmann::json& plans) {
  std::vector<std::string> keys(std::begin(kLayoutKeys), std::end(kLayoutKeys));
  for (const auto& [key, value] : plans.front().at("plan").items())
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
  return keys;
}

// Whether a key is shown on each row: the layout keys always, any other where the plans differ
// (issue 32: rows that differed only in recompute_layers or an overlap flag read the same).
bool shown_per_row(const nlohmann::json& plans, const std::string& key) {
  if (std::find(std::begin(kAlwaysShown), std::end(kAlwaysShown), key) != std::end(kAlwaysShown)) return true;
  for (const auto& p : plans)
    if (p.at("plan").at(key) != plans.front().at("plan").at(key)) return true;
  return false;
}

// The plans' keys in page order, split into those each row shows and those every listed plan
// shares (shown once under the table): together, every key.
struct PlanKeys {
  std::vector<std::string> per_row, shared;
};
PlanKeys split_plan_keys(const nlohmann::json& plans) {
  PlanKeys out;
  for (std::string& key : plan_keys(plans)) (shown_per_row(plans, key) ? out.per_row : out.shared).push_back(std::move(key));
  return out;
}

// "tp=8 pp=4 dp=2 mb=1 recompute_layers=4": the plan's values of `keys`.
std::string keys_text(const nlohmann::json& plan, const std::vector<std::string>& keys) {
  std::string s;
  for (const std::string& key : keys) s += (s.empty() ? "" : " ") + key_value(plan, key);
  return s;
}

std::string confidence_text(const nlohmann::json& c) {
  if (!c.is_object()) return "none";
  std::string text = c.value("class", std::string("none"));
  text += c.value("validated", false) ? " (validated)" : " (extrapolated)";
  return text;
}

std::string top_table(const nlohmann::json& doc) {
  const nlohmann::json& plans = json_at(doc, "plans");
  const PlanKeys keys = split_plan_keys(plans);
  HtmlTable t{{"#", "plan", "step time (s)", "MFU (16-bit peak)", "tokens/s", "peak memory (GiB)", "confidence"}, {}};
  for (std::size_t i = 0; i < plans.size(); ++i)
    t.rows.push_back({HtmlCell{std::to_string(i + 1), static_cast<double>(i + 1), "", 1},
                      text_cell(keys_text(plans[i].at("plan"), keys.per_row)),
                      json_cell(doc, plan_path(i, "iteration_time_s"), kSecondsDecimals),
                      json_cell(doc, plan_path(i, "mfu"), kPercentDecimals, kPercent, "%"),
                      json_cell(doc, plan_path(i, "tokens_per_s"), 0),
                      json_cell(doc, plan_path(i, "peak_memory_gib"), kGibDecimals),
                      text_cell(confidence_text(plans[i].value("confidence", nlohmann::json())))});
  const std::string shared = keys_text(plans.front().at("plan"), keys.shared);
  return html_table(t) + (shared.empty() ? "" : "<p>Every plan above also has: " + escape_html(shared) + "</p>");
}

std::string scatter_figure(const nlohmann::json& doc, const std::vector<Point2>& feasible) {
  ScatterChart chart;
  chart.title = "Feasible plans costed: step time against peak memory";
  chart.x_label = "peak memory per GPU (GiB)";
  chart.y_label = "step time (s)";
  chart.y_scale = AxisScale::log10;
  const std::vector<std::size_t> front = pareto_front(feasible);
  std::vector<bool> on_front(feasible.size(), false);
  for (std::size_t i : front) on_front[i] = true;
  for (std::size_t i : downsample_keeping_front(feasible, kMaxScatterPoints))
    chart.points.push_back({feasible[i].x, feasible[i].y, on_front[i] ? "on the Pareto front" : "feasible plan", ""});
  for (std::size_t i : front) chart.front.push_back(feasible[i]);
  // The winner, as the simulator re-scored it (what the table lists).
  chart.points.push_back({json_number(doc, plan_path(0, "peak_memory_gib")),
                          json_number(doc, plan_path(0, "iteration_time_s")), "winner (simulated)",
                          "the recommended plan"});
  chart.highlighted = chart.points.size() - 1;
  return chart_figure("time-vs-memory", scatter_chart_svg(chart)) +
         "<p>Times from the closed form; plans proven slower than the listed ones are not costed.</p>";
}

std::string breakdown_figure(const nlohmann::json& doc) {
  const nlohmann::json& plans = json_at(doc, "plans");
  StackedBarChart bars{"Time breakdown of the top plans (critical path)", "s", {}, std::nullopt, "limit", 720, 22, 3};
  for (std::size_t i = 0; i < plans.size(); ++i) {
    BarRow row{"#" + std::to_string(i + 1), {}};
    for (const auto& [key, name] : kTimeTerms)
      row.segments.push_back({name, json_number(doc, plan_path(i, std::string("estimate.breakdown.") + key))});
    bars.rows.push_back(std::move(row));
  }
  return chart_figure("top-breakdown", stacked_bar_chart_svg(bars));
}

}  // namespace

std::string plan_page_html(const nlohmann::json& doc, const PlanPageInputs& in) {
  HtmlPage page("plan", in.title, in.subtitle);
  std::string searched = "<p>" + json_span(doc, "evaluated", 0) + " plans costed, " + json_span(doc, "feasible", 0) +
                         " fit in " + json_span(doc, "memory_limit_gib", 1, 1, " GiB") + " per GPU.</p>";
  if (json_at(doc, "plans").empty()) {
    page.add_section("No plan fits", searched);
    return page.to_string();
  }
  page.add_section("Top plans", searched + top_table(doc) +
                                    "<p>Why the winner: " + escape_html(doc.value("why", std::string())) + "</p>");
  if (!in.feasible.empty()) page.add_section("Time against memory", scatter_figure(doc, in.feasible));
  page.add_section("Where the time goes", breakdown_figure(doc));
  if (!in.launch_script.empty())
    page.add_section("Launch the winner (Megatron-LM)", preformatted_block(in.launch_script));
  return page.to_string();
}

}  // namespace tessera::report
