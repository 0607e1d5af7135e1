#include "report/bar_chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/checks.h"
#include "core/error.h"
#include "report/chart_axis.h"
#include "report/html_text.h"
#include "report/svg_canvas.h"

namespace tessera::report {

namespace {

constexpr double kLabelWidthPx = 110, kTotalWidthPx = 90;  // row labels left, totals right of the bars
// A legend entry fits a 22-character name at 12 px (about 6.5 px per character) beside its swatch.
constexpr double kTitleHeightPx = 28, kAxisHeightPx = 22, kLegendHeightPx = 24, kLegendEntryPx = 170;
constexpr double kBarFill = 0.7;  // of the row height; the rest is the gap between bars
constexpr double kMinBarPlotPx = 40, kMaxPx = 1e6;
constexpr double kMaxValue = std::numeric_limits<double>::max() / 4;

double row_total(const BarRow& row) {
  double total = 0;
  for (const BarSegment& s : row.segments) total += s.value;
  return total;
}

void validate_bar_chart(const StackedBarChart& chart) {
  if (chart.rows.empty()) throw Error("rows", "no rows", "at least one row");
  require_positive_real("width_px", chart.width_px, kMaxPx);
  require_positive_real("row_height_px", chart.row_height_px, kMaxPx);
  for (std::size_t i = 0; i < chart.rows.size(); ++i) {
    const std::string row = "rows[" + std::to_string(i) + "]";
    if (chart.rows[i].segments.empty()) throw Error(row + ".segments", "no segments", "at least one segment");
    for (std::size_t j = 0; j < chart.rows[i].segments.size(); ++j)
      require_non_negative_real(row + ".segments[" + std::to_string(j) + "].value", chart.rows[i].segments[j].value,
                                kMaxValue);
  }
  if (chart.limit) require_positive_real("limit", *chart.limit, kMaxValue);
}

std::size_t legend_per_line(const BarLayout& layout) {
  return std::max<std::size_t>(1, static_cast<std::size_t>((layout.plot_width_px + kTotalWidthPx) / kLegendEntryPx));
}

std::size_t legend_lines(const BarLayout& layout) {
  return std::max<std::size_t>(1, (layout.legend.size() + legend_per_line(layout) - 1) / legend_per_line(layout));
}

}  // namespace

BarLayout layout_stacked_bars(const StackedBarChart& chart) {
  validate_bar_chart(chart);
  BarLayout layout;
  layout.plot_left_px = kLabelWidthPx;
  layout.plot_width_px = chart.width_px - kLabelWidthPx - kTotalWidthPx;
  if (layout.plot_width_px < kMinBarPlotPx) throw Error("width_px", "too small for the bars", "at least 240");
  double largest = chart.limit.value_or(0);
  for (const BarRow& row : chart.rows) largest = std::max(largest, row_total(row));
  // The scale ends on a nice tick so the axis labels are round numbers.
  layout.scale_max =
      largest > 0 ? fit_axis_domain(AxisScale::linear, std::vector<double>{0, largest}, "rows").max_value : 1;
  const double px_per_value = layout.plot_width_px / layout.scale_max;
  if (chart.limit) layout.limit_x_px = layout.plot_left_px + *chart.limit * px_per_value;
  for (std::size_t i = 0; i < chart.rows.size(); ++i) {
    BarBox bar;
    bar.y_px = kTitleHeightPx + static_cast<double>(i) * chart.row_height_px;
    double x = layout.plot_left_px;
    for (const BarSegment& s : chart.rows[i].segments) {
      auto found = std::find(layout.legend.begin(), layout.legend.end(), s.name);
      if (found == layout.legend.end()) found = layout.legend.insert(found, s.name);
      const double width = s.value * px_per_value;
      bar.segments.push_back({x, width, static_cast<std::size_t>(found - layout.legend.begin())});
      x += width;
    }
    const double total = row_total(chart.rows[i]);
    bar.width_px = total * px_per_value;
    bar.over_limit = chart.limit && total > *chart.limit;
    layout.bars.push_back(bar);
  }
  layout.height_px = kTitleHeightPx + static_cast<double>(chart.rows.size()) * chart.row_height_px + kAxisHeightPx +
                     kLegendHeightPx * static_cast<double>(legend_lines(layout));
  return layout;
}

std::string stacked_bar_chart_svg(const StackedBarChart& chart) {
  const BarLayout layout = layout_stacked_bars(chart);
  SvgCanvas svg(chart.width_px, layout.height_px, chart.title);
  svg.text({chart.width_px / 2, 18}, chart.title, TextAnchor::middle, "chart-title", 14);
  const double bar_height = chart.row_height_px * kBarFill;
  const double axis_y = kTitleHeightPx + static_cast<double>(chart.rows.size()) * chart.row_height_px;
  const std::string unit = chart.unit.empty() ? "" : " " + chart.unit;
  for (std::size_t i = 0; i < layout.bars.size(); ++i) {
    const BarBox& bar = layout.bars[i];
    const double total = row_total(chart.rows[i]);
    svg.begin_group(bar.over_limit ? "bar over-limit" : "bar",
                    chart.rows[i].label + ": " + display_number(total, chart.total_digits) + unit);
    svg.text({layout.plot_left_px - 6, bar.y_px + bar_height - 3}, chart.rows[i].label, TextAnchor::end, "row-label");
    for (std::size_t j = 0; j < bar.segments.size(); ++j) {
      const SegmentBox& s = bar.segments[j];
      svg.begin_group("segment",
                      chart.rows[i].segments[j].name + ": " + display_number(chart.rows[i].segments[j].value) + unit);
      svg.rect(s.x_px, bar.y_px, s.width_px, bar_height, "", Paint{palette_colour(s.colour), "none", 1, ""});
      svg.end_group();
    }
    // Over the limit: a heavy outline and a "!" so it shows without colour too.
    if (bar.over_limit)
      svg.rect(layout.plot_left_px, bar.y_px, bar.width_px, bar_height, "over-limit-mark",
               Paint{"none", "#000000", 2, ""});
    svg.text({layout.plot_left_px + bar.width_px + 4, bar.y_px + bar_height - 3},
             display_number(total, chart.total_digits) + unit + (bar.over_limit ? " !" : ""), TextAnchor::start,
             "bar-total");
    svg.end_group();
  }
  const Paint axis_paint{"none", "#333333", 1, ""};
  const ChartAxis axis(AxisScale::linear, {0, layout.scale_max}, layout.plot_left_px,
                       layout.plot_left_px + layout.plot_width_px);
  svg.line({layout.plot_left_px, axis_y}, {layout.plot_left_px + layout.plot_width_px, axis_y}, "axis", axis_paint);
  for (const double tick : axis.ticks())
    svg.text({axis.to_pixel(tick), axis_y + 14}, axis.tick_label(tick), TextAnchor::middle, "tick-label", 10);
  if (layout.limit_x_px) {
    svg.begin_group("limit", chart.limit_label + ": " + display_number(*chart.limit) + unit);
    svg.line({*layout.limit_x_px, kTitleHeightPx - 4}, {*layout.limit_x_px, axis_y}, "",
             Paint{"none", "#000000", 1.5, "5 3"});
    svg.text({*layout.limit_x_px, kTitleHeightPx - 6}, chart.limit_label, TextAnchor::middle, "limit-label", 10);
    svg.end_group();
  }
  svg.begin_group("legend");
  for (std::size_t c = 0; c < layout.legend.size(); ++c) {
    const std::size_t column = c % legend_per_line(layout), line = c / legend_per_line(layout);
    const double x = layout.plot_left_px + static_cast<double>(column) * kLegendEntryPx;
    const double y = axis_y + kAxisHeightPx + 10 + static_cast<double>(line) * kLegendHeightPx;
    svg.rect(x, y - 9, 10, 10, "", Paint{palette_colour(c), "none", 1, ""});
    svg.text({x + 14, y}, layout.legend[c], TextAnchor::start, "legend-label");
  }
  svg.end_group();
  return svg.to_string();
}

}  // namespace tessera::report
