#include "report/html_page.h"

#include <cmath>
#include <cstdio>

#include "core/error.h"
#include "report/html_text.h"

namespace tessera::report {

namespace {

// System fonts only; print on white with black text; charts never split across pages; the
// interactive timeline canvas gives way to its static summary on paper.
constexpr const char* kCss = R"CSS(<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;line-height:1.4}
body{margin:24px auto;max-width:1100px;padding:0 16px;color:#1a1a1a;background:#fafafa}
h1{font-size:1.6em;margin-bottom:0}.subtitle{color:#555;margin-top:4px}
section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:12px 16px;margin:16px 0}
h2{font-size:1.2em;margin-top:0}svg.chart{max-width:100%;height:auto;font-family:inherit}
table{border-collapse:collapse;font-size:0.9em}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}th{background:#f0f0f0;cursor:pointer;user-select:none}
th[aria-sort=ascending]::after{content:" \25B2"}th[aria-sort=descending]::after{content:" \25BC"}
pre.command{background:#f4f4f4;border:1px solid #ddd;padding:8px;white-space:pre-wrap;word-break:break-all}
.timeline canvas{width:100%;display:block;cursor:grab}
.swatch{display:inline-block;width:10px;height:10px;margin:0 4px 0 8px}
@media print{body{background:#fff;color:#000;margin:0;max-width:none}section{border:none;break-inside:avoid;padding:0}
th{background:#fff}.timeline{display:none}svg.chart,table{break-inside:avoid}}
</style>)CSS";

// Click a header to sort its table: numbers by data-sort when every cell has one, else text.
constexpr const char* kSortScript = R"JS(<script>(function(){
document.querySelectorAll('table.sortable th').forEach(function(th){th.addEventListener('click',function(){
  var table=th.closest('table'),body=table.tBodies[0],col=th.cellIndex,rows=Array.from(body.rows);
  var up=th.getAttribute('aria-sort')!=='ascending';
  table.querySelectorAll('th').forEach(function(h){h.removeAttribute('aria-sort');});
  th.setAttribute('aria-sort',up?'ascending':'descending');
  var numeric=rows.every(function(r){return r.cells[col].hasAttribute('data-sort');});
  rows.sort(function(a,b){var x=a.cells[col],y=b.cells[col],c=numeric?
    Number(x.dataset.sort)-Number(y.dataset.sort):x.textContent.localeCompare(y.textContent);return up?c:-c;});
  rows.forEach(function(r){body.appendChild(r);});});});})();</script>)JS";

std::string sort_key_text(double key) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", key);  // exact: sorting must not tie distinct keys
  return buffer;
}

}  // namespace

std::string html_table(const HtmlTable& table) {
  if (table.header.empty()) throw Error("header", "no columns", "at least one column");
  std::string html = "<table class=\"sortable\"><thead><tr>";
  for (const std::string& name : table.header) html += "<th>" + escape_html(name) + "</th>";
  html += "</tr></thead><tbody>";
  for (std::size_t i = 0; i < table.rows.size(); ++i) {
    const std::string row = "rows[" + std::to_string(i) + "]";
    if (table.rows[i].size() != table.header.size())
      throw Error(row, std::to_string(table.rows[i].size()) + " cells",
                  std::to_string(table.header.size()) + " cells, one per header");
    html += "<tr>";
    for (std::size_t j = 0; j < table.rows[i].size(); ++j) {
      const HtmlCell& cell = table.rows[i][j];
      if (!cell.sort_key) {
        html += "<td>" + escape_html(cell.text) + "</td>";
        continue;
      }
      if (std::isnan(*cell.sort_key))
        throw Error(row + "[" + std::to_string(j) + "].sort_key", "got NaN", "a number, or none");
      html += "<td class=\"num\" data-sort=\"" + sort_key_text(*cell.sort_key) + "\"";
      if (!cell.json_path.empty()) {
        html += " data-json=\"" + escape_html(cell.json_path) + "\" data-value=\"" + sort_key_text(*cell.sort_key) +
                "\"";
        if (cell.json_scale != 1) html += " data-scale=\"" + sort_key_text(cell.json_scale) + "\"";
      }
      html += ">" + escape_html(cell.text) + "</td>";
    }
    html += "</tr>";
  }
  return html + "</tbody></table>";
}

std::string chart_figure(std::string_view name, std::string_view chart_html) {
  return "<figure data-chart=\"" + escape_html(name) + "\">" + std::string(chart_html) + "</figure>";
}

std::string preformatted_block(std::string_view text) {
  return "<pre class=\"command\">" + escape_html(text) + "</pre>";
}

HtmlPage::HtmlPage(std::string kind, std::string title, std::string subtitle)
    : kind_(std::move(kind)), title_(std::move(title)), subtitle_(std::move(subtitle)) {}

void HtmlPage::add_section(std::string heading, std::string html_fragment) {
  sections_.push_back({std::move(heading), std::move(html_fragment)});
}

std::string HtmlPage::to_string() const {
  std::string html =
      "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>" +
      escape_html(title_) + "</title>" + kCss + "</head><body><header><h1>" + escape_html(title_) + "</h1>";
  if (!subtitle_.empty()) html += "<p class=\"subtitle\">" + escape_html(subtitle_) + "</p>";
  html += "</header><main data-report=\"" + escape_html(kind_) + "\">";
  for (const Section& section : sections_)
    html += "<section><h2>" + escape_html(section.heading) + "</h2>" + section.html + "</section>";
  return html + "</main>" + kSortScript + "</body></html>\n";
}

}  // namespace tessera::report
