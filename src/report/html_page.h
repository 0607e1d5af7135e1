// HtmlPage: one self-contained report document (inline CSS and scripts, system fonts, print
// rules, no URL of any kind), built from sections of raw HTML fragments; HtmlTable, a table whose
// headers sort on click; and a <pre> block for a launch command.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::report {

struct HtmlCell {
  std::string text;
  std::optional<double> sort_key;  // numeric cells sort by this; others by text
  // Where a shown number comes from: a path into the command's --json document (json_number.h)
  // whose value is sort_key, shown as value x json_scale. Written as data-json / data-value /
  // data-scale, so a test can compare every shown number with the JSON field.
  std::string json_path;
  double json_scale = 1;
};

struct HtmlTable {
  std::vector<std::string> header;
  std::vector<std::vector<HtmlCell>> rows;
};

// The <table class="sortable"> fragment. Throws tessera::Error ("header") when empty,
// ("rows[i]") when a row's cell count differs from the header's, ("rows[i][j].sort_key") for NaN.
std::string html_table(const HtmlTable& table);

// A chart in <figure data-chart="name">: the name a test (and a reader's tooling) finds it by.
std::string chart_figure(std::string_view name, std::string_view chart_html);

// `text` escaped in a <pre class="command"> block (e.g. a launch command to copy).
std::string preformatted_block(std::string_view text);

class HtmlPage {
 public:
  // kind: the report kind, written as <main data-report="kind"> (estimate, validate, plan, multimodal).
  HtmlPage(std::string kind, std::string title, std::string subtitle);
  // `html_fragment` is trusted markup from this layer's renderers; `heading` is escaped.
  void add_section(std::string heading, std::string html_fragment);
  // The whole document: <!doctype html>, <meta charset="utf-8">, CSS, the sections, and the
  // table-sorting script once.
  std::string to_string() const;

 private:
  struct Section {
    std::string heading;
    std::string html;
  };
  std::string kind_;
  std::string title_;
  std::string subtitle_;
  std::vector<Section> sections_;
};

}  // namespace tessera::report
