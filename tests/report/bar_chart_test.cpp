#include "report/bar_chart.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/thrown_field.h"
#include "common/markup_check.h"

namespace tessera::report {
namespace {

using report_testing::count_of;
using report_testing::markup_problem;
using tessera::testing::thrown_field;

StackedBarChart stage_memory() {
  StackedBarChart chart{"Memory per stage", "GiB", {}, 76.0, "usable", 720, 22, 3};
  for (int stage = 0; stage < 4; ++stage)
    chart.rows.push_back(
        {"stage " + std::to_string(stage),
         {{"weights", 10}, {"gradients", 10}, {"optimizer", 30}, {"activations", 20.0 - 4 * stage}, {"buffers", 2.5}}});
  return chart;
}

TEST(StackedBarChart, SegmentsTileEachBarExactly) {
  const BarLayout layout = layout_stacked_bars(stage_memory());
  ASSERT_EQ(layout.bars.size(), 4u);
  EXPECT_EQ(layout.legend, (std::vector<std::string>{"weights", "gradients", "optimizer", "activations", "buffers"}));
  const double px_per_gib = layout.plot_width_px / layout.scale_max;
  for (std::size_t i = 0; i < layout.bars.size(); ++i) {
    const BarBox& bar = layout.bars[i];
    double x = layout.plot_left_px, sum = 0;
    for (const SegmentBox& s : bar.segments) {
      EXPECT_DOUBLE_EQ(s.x_px, x);  // contiguous, no gaps or overlaps
      x += s.width_px;
      sum += s.width_px;
    }
    EXPECT_NEAR(sum, bar.width_px, 1e-9);
    EXPECT_NEAR(bar.width_px, (72.5 - 4.0 * static_cast<double>(i)) * px_per_gib, 1e-9);
    EXPECT_LE(bar.width_px, layout.plot_width_px);
    if (i > 0) {
      EXPECT_GT(bar.y_px, layout.bars[i - 1].y_px);
    }
  }
}

TEST(StackedBarChart, LimitLineAtItsValueAndBarsOverItMarked) {
  StackedBarChart chart = stage_memory();
  chart.limit = 70;
  const BarLayout layout = layout_stacked_bars(chart);
  ASSERT_TRUE(layout.limit_x_px.has_value());
  EXPECT_NEAR(*layout.limit_x_px, layout.plot_left_px + 70 / layout.scale_max * layout.plot_width_px, 1e-9);
  EXPECT_GE(layout.scale_max, 72.5);
  std::vector<bool> over;
  for (const BarBox& bar : layout.bars) over.push_back(bar.over_limit);
  EXPECT_EQ(over, (std::vector<bool>{true, false, false, false}));  // 72.5 and 68.5, 64.5, 60.5 GiB
  const std::string svg = stacked_bar_chart_svg(chart);
  EXPECT_EQ(markup_problem(svg), "") << svg;
  EXPECT_EQ(count_of(svg, "class=\"bar over-limit\""), 1u);
  EXPECT_EQ(count_of(svg, "class=\"segment\""), 20u);
  EXPECT_EQ(count_of(svg, "class=\"limit\""), 1u);
  EXPECT_NE(svg.find("72.5 GiB !"), std::string::npos);
}

TEST(StackedBarChart, LimitBeyondEveryBarWidensTheScale) {
  StackedBarChart chart = stage_memory();
  chart.limit = 141;
  const BarLayout layout = layout_stacked_bars(chart);
  EXPECT_GE(layout.scale_max, 141);
  EXPECT_LE(*layout.limit_x_px, layout.plot_left_px + layout.plot_width_px);
}

TEST(StackedBarChart, InvalidInputNamesTheField) {
  const auto field = [](auto edit) {
    StackedBarChart chart = stage_memory();
    edit(chart);
    return thrown_field([&] { stacked_bar_chart_svg(chart); });
  };
  EXPECT_EQ(field([](StackedBarChart& c) { c.rows.clear(); }), "rows");
  EXPECT_EQ(field([](StackedBarChart& c) { c.rows[1].segments.clear(); }), "rows[1].segments");
  EXPECT_EQ(field([](StackedBarChart& c) { c.rows[2].segments[3].value = -1; }), "rows[2].segments[3].value");
  EXPECT_EQ(field([](StackedBarChart& c) { c.rows[0].segments[0].value = NAN; }), "rows[0].segments[0].value");
  EXPECT_EQ(field([](StackedBarChart& c) { c.limit = 0; }), "limit");
  EXPECT_EQ(field([](StackedBarChart& c) { c.width_px = -720; }), "width_px");
  EXPECT_EQ(field([](StackedBarChart& c) { c.row_height_px = 0; }), "row_height_px");
}

}  // namespace
}  // namespace tessera::report
