// StackedBarChart: horizontal stacked bars, one per row label (e.g. per-stage memory split into
// weights / gradients / optimizer / activations / buffers), a shared legend, the total at the end
// of each bar and an optional vertical limit line (usable memory) with the bars over it marked.
// `layout_stacked_bars` exposes the geometry so callers and tests can check it.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tessera::report {

struct BarSegment {
  std::string name;  // one colour per name, in order of first appearance, shared by all rows
  double value = 0;
};

struct BarRow {
  std::string label;
  std::vector<BarSegment> segments;
};

struct StackedBarChart {
  std::string title;
  std::string unit;  // appended to totals and the axis, e.g. "GiB"
  std::vector<BarRow> rows;
  std::optional<double> limit;  // vertical line, e.g. usable memory
  std::string limit_label = "limit";
  double width_px = 720;
  double row_height_px = 22;
  // Significant digits of the totals written at the bars' ends (e.g. 6 for GPU counts, shown whole).
  int total_digits = 3;
};

struct SegmentBox {
  double x_px = 0;
  double width_px = 0;
  std::size_t colour = 0;  // index of the segment's name in legend order
};

struct BarBox {
  double y_px = 0;
  double width_px = 0;  // of the whole bar: the row's total
  bool over_limit = false;
  std::vector<SegmentBox> segments;
};

struct BarLayout {
  double plot_left_px = 0;
  double plot_width_px = 0;
  double height_px = 0;
  double scale_max = 0;  // value at the right end of the plot
  std::optional<double> limit_x_px;
  std::vector<std::string> legend;  // segment names in colour order
  std::vector<BarBox> bars;
};

// Throws tessera::Error naming the field: "rows" (empty), "rows[i].segments" (empty),
// "rows[i].segments[j].value" (negative or non-finite), "limit" (not > 0 and finite),
// "width_px" / "row_height_px".
BarLayout layout_stacked_bars(const StackedBarChart& chart);
std::string stacked_bar_chart_svg(const StackedBarChart& chart);

}  // namespace tessera::report
