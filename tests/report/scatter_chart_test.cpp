#include "report/scatter_chart.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/thrown_field.h"
#include "common/markup_check.h"

namespace tessera::report {
namespace {

using report_testing::count_of;
using report_testing::markup_problem;
using tessera::testing::thrown_field;

ScatterChart plans_chart() {
  ScatterChart chart;
  chart.title = "Plans: step time vs memory";
  chart.x_label = "memory per GPU (GiB)";
  chart.y_label = "step time (s)";
  chart.x_scale = AxisScale::log10;
  chart.y_scale = AxisScale::log10;
  const char* families[] = {"tp<=8", "pp & tp", "zero-3", "cp"};
  for (int i = 0; i < 40; ++i)
    chart.points.push_back({5.0 + 3 * i, 100.0 / (1 + i) + i, families[i % 4], "plan \"" + std::to_string(i) + "\""});
  chart.highlighted = 7;
  chart.front = {{5, 100}, {20, 30}, {80, 20}};
  return chart;
}

TEST(ScatterChart, RendersWellFormedSvgWithLegendAndWinner) {
  const std::string svg = scatter_chart_svg(plans_chart());
  EXPECT_EQ(markup_problem(svg), "") << svg;
  EXPECT_EQ(count_of(svg, "<g class=\"point\""), 40u);
  EXPECT_EQ(count_of(svg, "class=\"legend-entry\""), 4u + 2u);  // categories, best, Pareto front
  EXPECT_NE(svg.find("pp &amp; tp"), std::string::npos);
  EXPECT_NE(svg.find("tp&lt;=8"), std::string::npos);
  EXPECT_NE(svg.find("<title>plan &quot;7&quot;</title>"), std::string::npos);
  EXPECT_EQ(count_of(svg, "class=\"winner\""), 1u);
  EXPECT_EQ(count_of(svg, "class=\"front\""), 1u);
  EXPECT_EQ(count_of(svg, "<polygon"), 20u + 2u);  // triangles and diamonds: 10 each, 1 each in the legend
}

TEST(ScatterChart, DiagonalWithBandForPredictedVsMeasured) {
  ScatterChart chart;
  chart.title = "Predicted vs measured";
  chart.x_label = "measured (s)";
  chart.y_label = "predicted (s)";
  chart.diagonal_band_fraction = 0.1;
  for (int i = 1; i <= 12; ++i) chart.points.push_back({1.0 * i, 1.05 * i, "H100", ""});
  for (const AxisScale scale : {AxisScale::linear, AxisScale::log10}) {
    chart.x_scale = chart.y_scale = scale;
    const std::string svg = scatter_chart_svg(chart);
    EXPECT_EQ(markup_problem(svg), "");
    EXPECT_EQ(count_of(svg, "class=\"diagonal\""), 1u);
    EXPECT_EQ(count_of(svg, "class=\"diagonal-band\""), 2u);
    EXPECT_NE(svg.find("y = x \u00b110%"), std::string::npos);
  }
}

TEST(ScatterChart, InvalidInputNamesTheField) {
  const auto field = [](auto edit) {
    ScatterChart chart = plans_chart();
    edit(chart);
    return thrown_field([&] { scatter_chart_svg(chart); });
  };
  EXPECT_EQ(field([](ScatterChart& c) { c.points.clear(); }), "points");
  EXPECT_EQ(field([](ScatterChart& c) { c.points[3].y = NAN; }), "points[3].y");
  EXPECT_EQ(field([](ScatterChart& c) { c.points[2].x = 0; }), "points[2].x");  // log axis
  EXPECT_EQ(field([](ScatterChart& c) { c.highlighted = 40; }), "highlighted");
  EXPECT_EQ(field([](ScatterChart& c) { c.front[1].x = -1; }), "front[1].x");
  EXPECT_EQ(field([](ScatterChart& c) { c.diagonal_band_fraction = 1.5; }), "diagonal_band_fraction");
  EXPECT_EQ(field([](ScatterChart& c) {
              c.diagonal_band_fraction = 0.1;
              c.y_scale = AxisScale::linear;
            }),
            "y_scale");
  EXPECT_EQ(field([](ScatterChart& c) { c.width_px = 100; }), "width_px");
  EXPECT_EQ(field([](ScatterChart& c) { c.height_px = -5; }), "height_px");
}

}  // namespace
}  // namespace tessera::report
