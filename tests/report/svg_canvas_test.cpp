#include "report/svg_canvas.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/thrown_field.h"
#include "common/markup_check.h"

namespace tessera::report {
namespace {

using report_testing::count_of;
using report_testing::markup_problem;
using tessera::testing::thrown_field;

const Paint kFill{"#0072B2", "none", 1, ""};
const Paint kStroke{"none", "#000", 1.5, "4 3"};

TEST(SvgCanvas, EveryPrimitiveGivesWellFormedSvg) {
  SvgCanvas svg(200, 100, "a \"quoted\" <chart>");
  svg.rect(1, 2, 30, 40, "bar", kFill);
  svg.line({0, 0}, {10, 10}, "grid", kStroke);
  svg.polyline({{0, 0}, {5, 5}, {9, 1}}, "front", kStroke);
  svg.circle({50, 50}, 4, "point", kFill);
  svg.begin_group("point", "tip <b> & more");
  for (std::size_t s = 0; s < 5; ++s) svg.marker(palette_shape(s), {20, 20}, 4, "", kFill);
  svg.end_group();
  svg.text({10, 90}, "x < y & z", TextAnchor::middle, "label");
  const std::string out = svg.to_string();
  EXPECT_EQ(markup_problem(out), "") << out;
  EXPECT_NE(out.find("viewBox=\"0 0 200 100\""), std::string::npos);
  EXPECT_NE(out.find("role=\"img\""), std::string::npos);
  EXPECT_NE(out.find("aria-label=\"a &quot;quoted&quot; &lt;chart&gt;\""), std::string::npos);
  EXPECT_NE(out.find("<title>tip &lt;b&gt; &amp; more</title>"), std::string::npos);
  EXPECT_NE(out.find("text-anchor=\"middle\""), std::string::npos);
  EXPECT_NE(out.find("stroke-dasharray=\"4 3\""), std::string::npos);
  EXPECT_EQ(count_of(out, "class=\"point\""), 2u);
  EXPECT_EQ(out.find("http"), std::string::npos);  // no xmlns: inline SVG needs none
}

TEST(SvgCanvas, PaletteCyclesAndDiffers) {
  EXPECT_EQ(palette_colour(0), palette_colour(8));
  for (std::size_t i = 1; i < 8; ++i) EXPECT_NE(palette_colour(i), palette_colour(i - 1));
  EXPECT_NE(palette_shape(0), palette_shape(1));
}

TEST(SvgCanvas, InvalidInputNamesTheField) {
  EXPECT_EQ(thrown_field([] { SvgCanvas(0, 10, ""); }), "width_px");
  EXPECT_EQ(thrown_field([] { SvgCanvas(10, NAN, ""); }), "height_px");
  SvgCanvas svg(10, 10, "");
  EXPECT_EQ(thrown_field([&] { svg.rect(0, 0, -1, 5, "", kFill); }), "rect.width_px");
  EXPECT_EQ(thrown_field([&] { svg.rect(NAN, 0, 1, 5, "", kFill); }), "rect.x_px");
  EXPECT_EQ(thrown_field([&] { svg.circle({INFINITY, 0}, 1, "", kFill); }), "circle.x_px");
  EXPECT_EQ(thrown_field([&] { svg.polyline({}, "", kStroke); }), "polyline.points");
  EXPECT_EQ(thrown_field([&] { svg.end_group(); }), "group");
  svg.begin_group("open");
  EXPECT_EQ(thrown_field([&] { (void)svg.to_string(); }), "group");
}

}  // namespace
}  // namespace tessera::report
