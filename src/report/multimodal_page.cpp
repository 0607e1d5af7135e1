#include "report/multimodal_page.h"

#include <algorithm>

#include "report/bar_chart.h"
#include "report/html_page.h"
#include "report/html_text.h"
#include "report/json_number.h"

namespace tessera::report {

namespace {

// The strategies the document holds, by path, fastest first (issue 32: the page listed the
// losing strategy first): the best disaggregated plan, the monolithic layout on every GPU and on
// the subset of fewer GPUs, the colocated plan.
std::vector<std::pair<std::string, std::string>> strategies(const nlohmann::json& doc) {
  std::vector<std::pair<std::string, std::string>> out;
  if (!json_at(doc, "plans").empty()) out.emplace_back("disaggregated (best)", "plans[0]");
  if (doc.contains("baseline_monolithic") && doc.at("baseline_monolithic").is_object())
    out.emplace_back("monolithic on every GPU", "baseline_monolithic");
  if (doc.contains("on_fewer_gpus") && doc.at("on_fewer_gpus").is_object() &&
      doc.at("on_fewer_gpus").at("baseline_monolithic").is_object())
    out.emplace_back("monolithic on fewer GPUs", "on_fewer_gpus.baseline_monolithic");
  if (doc.contains("colocated") && doc.at("colocated").is_object())
    out.emplace_back("colocated (per-module layouts, every GPU)", "colocated");
  std::stable_sort(out.begin(), out.end(), [&](const auto& a, const auto& b) {
    return json_number(doc, a.second + ".iteration_time_s") < json_number(doc, b.second + ".iteration_time_s");
  });
  return out;
}

// The plan whose modules the page charts: the recommended one (any strategy), else the best
// disaggregated plan.
std::string charted_plan(const nlohmann::json& doc) {
  return doc.contains("recommended_plan") && doc.at("recommended_plan").is_object() ? "recommended_plan" : "plans[0]";
}

// The winner and its margin over the runner-up, when the search found two strategies or more.
std::string winner_text(const nlohmann::json& doc) {
  if (!doc.contains("margin_over_runner_up") || !doc.at("margin_over_runner_up").is_number()) return "";
  return "<p>Winner: " + escape_html(json_at(doc, "recommended").get<std::string>()) + ", " +
         json_span(doc, "margin_over_runner_up", kPercentDecimals, kPercent, "%") + " faster than the runner-up, " +
         escape_html(json_at(doc, "runner_up").get<std::string>()) + ".</p>";
}

std::string strategy_table(const nlohmann::json& doc) {
  HtmlTable t{{"strategy", "step time (s)", "MFU", "samples/s", "peak memory (GiB)", "GPUs used", "GPUs idle"}, {}};
  for (const auto& [name, at] : strategies(doc))
    t.rows.push_back({text_cell(name), json_cell(doc, at + ".iteration_time_s", kSecondsDecimals),
                      json_cell(doc, at + ".mfu", kPercentDecimals, kPercent, "%"),
                      json_cell(doc, at + ".samples_per_s", 0), json_cell(doc, at + ".peak_memory_gib", kGibDecimals),
                      json_cell(doc, at + ".gpus_used", 0), json_cell(doc, at + ".gpus_idle", 0)});
  return html_table(t);
}

// The recommended plan's modules: one bar per module, its GPUs against the cluster's.
std::string groups_section(const nlohmann::json& doc) {
  const std::string plan = charted_plan(doc);
  const nlohmann::json& modules = json_at(doc, plan + ".modules");
  const std::string recommended = doc.value("recommended", std::string("disaggregated"));
  constexpr int kWholeGpuDigits = 9;
  StackedBarChart bars{"GPUs per module (" + (plan == "recommended_plan" ? "the recommended plan: " + recommended
                                                                          : std::string("disaggregated")) + ")",
                       "GPUs",
                       {},
                       json_number(doc, "cluster.gpus"),
                       "cluster",
                       720,
                       24,
                       kWholeGpuDigits};
  HtmlTable t{{"module", "role", "GPUs", "busy per step (s)"}, {}};
  for (std::size_t m = 0; m < modules.size(); ++m) {
    const std::string at = plan + ".modules[" + std::to_string(m) + "].";
    const std::string name = modules[m].value("name", std::string()), role = modules[m].value("role", std::string());
    bars.rows.push_back({name, {{role, json_number(doc, at + "gpus")}}});
    t.rows.push_back({text_cell(name), text_cell(role), json_cell(doc, at + "gpus", 0),
                      json_cell(doc, at + "busy_s", kSecondsDecimals)});
  }
  const bool disaggregated = json_at(doc, plan + ".strategy") == "disaggregated";
  return chart_figure("module-groups", stacked_bar_chart_svg(bars)) + html_table(t) +
         (disaggregated ? "<p>Modules with the same GPU count run on one group (an encoder and its projector).</p>"
                        : "<p>Every module runs on the GPUs of the pipeline stage it is folded into.</p>");
}

}  // namespace

std::string multimodal_page_html(const nlohmann::json& doc, const MultimodalPageInputs& in) {
  HtmlPage page(
      "multimodal", in.title,
      "data " + json_at(doc, "data").get<std::string>() + ", recommended: " +
          (doc.contains("recommended") && doc.at("recommended").is_string() ? doc.at("recommended").get<std::string>()
                                                                            : std::string("none")));
  std::string intro = "<p>" + json_span(doc, "global_batch", 0) + " sequences of " +
                      json_span(doc, "sequence_tokens", 0) + " tokens per step, " +
                      json_span(doc, "media_token_fraction", kPercentDecimals, kPercent, "%") + " media tokens; " +
                      json_span(doc, "evaluated", 0) + " splits costed.</p>";
  page.add_section("Strategies", intro + strategy_table(doc) + winner_text(doc));
  if (!json_at(doc, "plans").empty() || charted_plan(doc) == "recommended_plan")
    page.add_section("Module groups", groups_section(doc));
  if (in.disaggregated && !in.disaggregated->rows.empty())
    page.add_section("Disaggregated step (stage 0 = the encoders, the last = the generator)",
                     chart_figure("timeline", timeline_chart_html(*in.disaggregated)));
  if (in.monolithic && !in.monolithic->rows.empty())
    page.add_section("Monolithic step (the backbone's pipeline on every GPU)",
                     chart_figure("timeline", timeline_chart_html(*in.monolithic)));
  return page.to_string();
}

}  // namespace tessera::report
