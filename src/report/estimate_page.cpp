#include "report/estimate_page.h"

#include "report/bar_chart.h"
#include "report/breakdown_terms.h"
#include "report/html_page.h"
#include "report/html_text.h"
#include "report/json_number.h"

namespace tessera::report {

namespace {

std::string summary_section(const nlohmann::json& doc) {
  HtmlTable t{{"figure", "value"}, {}};
  t.rows.push_back({text_cell("iteration time"), json_cell(doc, "iteration_time_s", kSecondsDecimals, 1, " s")});
  t.rows.push_back({text_cell("tokens per second"), json_cell(doc, "tokens_per_s", 0)});
  t.rows.push_back({text_cell("MFU"), json_cell(doc, "mfu", kPercentDecimals, kPercent, "%")});
  t.rows.push_back({text_cell("HFU"), json_cell(doc, "hfu", kPercentDecimals, kPercent, "%")});
  t.rows.push_back({text_cell("model TFLOP/s per GPU"), json_cell(doc, "model_tflops_per_gpu", 1)});
  t.rows.push_back({text_cell("peak memory (GiB)"), json_cell(doc, "peak_memory_gib", kGibDecimals)});
  t.rows.push_back({text_cell("usable memory (GiB)"), json_cell(doc, "usable_memory_gib", kGibDecimals)});
  t.rows.push_back({text_cell("fits"), text_cell(json_at(doc, "fits").get<bool>() ? "yes" : "no")});
  std::string html = html_table(t);
  if (doc.contains("confidence") && doc.at("confidence").is_object()) {
    const nlohmann::json& c = doc.at("confidence");
    html += "<p>Confidence: class <b>" + escape_html(c.value("class", std::string("none"))) + "</b> (" +
            escape_html(c.value("description", std::string())) + ")";
    if (c.contains("median_error_pct") && c.at("median_error_pct").is_number())
      html += ", median |error| " + json_span(doc, "confidence.median_error_pct", kPercentDecimals, 1, "%") + " over " +
              json_span(doc, "confidence.runs", 0) + " published runs";
    html += c.value("validated", false) ? "." : "; <b>extrapolated</b> beyond the validated runs.";
    html += "</p>";
  }
  return html;
}

std::string time_section(const nlohmann::json& doc) {
  StackedBarChart bar{"Critical path", "s", {{"iteration", {}}}, std::nullopt, "limit", 720, 28, 3};
  HtmlTable t{{"term", "time (s)"}, {}};
  for (const auto& [key, name] : kTimeTerms) {
    const std::string path = std::string("breakdown.") + key;
    bar.rows[0].segments.push_back({name, json_number(doc, path)});
    t.rows.push_back({text_cell(name), json_cell(doc, path, kSecondsDecimals)});
  }
  t.rows.push_back(
      {text_cell("of which recompute (in compute)"), json_cell(doc, "breakdown.recompute_s", kSecondsDecimals)});
  return chart_figure("time-breakdown", stacked_bar_chart_svg(bar)) + html_table(t);
}

std::string memory_section(const nlohmann::json& doc) {
  const nlohmann::json& stages = json_at(doc, "stage_memory");
  StackedBarChart bars{
      "Memory per GPU by pipeline stage", "GiB", {}, json_number(doc, "usable_memory_gib"), "usable", 720, 18, 3};
  HtmlTable t{{"stage", "weights", "gradients", "optimizer", "activations", "logits", "buffers", "framework", "total"},
              {}};
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const std::string at = "stage_memory[" + std::to_string(s) + "].";
    BarRow row{"stage " + std::to_string(s), {}};
    std::vector<HtmlCell> cells = {json_cell(doc, at + "stage", 0)};
    for (const auto& [key, name] : kMemoryTerms) {
      row.segments.push_back({name, json_number(doc, at + key)});
      cells.push_back(json_cell(doc, at + key, kGibDecimals));
    }
    cells.push_back(json_cell(doc, at + "total_gib", kGibDecimals));
    bars.rows.push_back(std::move(row));
    t.rows.push_back(std::move(cells));
  }
  return chart_figure("stage-memory", stacked_bar_chart_svg(bars)) + html_table(t);
}

}  // namespace

std::string estimate_page_html(const nlohmann::json& doc, const std::string& subtitle, const TimelineChart& timeline) {
  const std::string title = "Tessera estimate: " + json_at(doc, "model").get<std::string>() + " on " +
                            std::to_string(json_at(doc, "cluster.gpus").get<std::int64_t>()) + " x " +
                            json_at(doc, "cluster.gpu").get<std::string>();
  HtmlPage page("estimate", title, subtitle);
  page.add_section("Summary", summary_section(doc));
  page.add_section("Where the time goes", time_section(doc));
  page.add_section("Memory per stage", memory_section(doc));
  if (!timeline.rows.empty())
    page.add_section("Pipeline timeline", chart_figure("timeline", timeline_chart_html(timeline)));
  return page.to_string();
}

}  // namespace tessera::report
