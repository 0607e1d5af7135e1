#include "report/scatter_chart.h"

#include <algorithm>
#include <cmath>

#include "core/checks.h"
#include "core/error.h"
#include "report/html_text.h"
#include "report/svg_canvas.h"

namespace tessera::report {

namespace {

// The top margin holds the title (baseline 20 px) and, below it, the y axis's label (issue 32:
// the two overlapped at 34 px).
constexpr double kMarginLeftPx = 64, kMarginRightPx = 170, kMarginTopPx = 50, kMarginBottomPx = 46;
constexpr double kMinScatterPlotPx = 40;
constexpr double kMarkerRadiusPx = 4, kWinnerRadiusPx = 7, kTickLengthPx = 4;
constexpr double kLegendRowPx = 18, kLegendGapPx = 16;
constexpr double kTitleFontPx = 14;
const Paint kAxisPaint{"none", "#333333", 1, ""};
const Paint kGridPaint{"none", "#dddddd", 1, ""};

struct Frame {
  ChartAxis x;
  ChartAxis y;
  double left_px, right_px, top_px, bottom_px;
};

std::vector<std::string> categories_in_order(const std::vector<ScatterPoint>& points) {
  std::vector<std::string> names;
  for (const ScatterPoint& p : points)
    if (std::find(names.begin(), names.end(), p.category) == names.end()) names.push_back(p.category);
  return names;
}

void validate_scatter_chart(const ScatterChart& chart) {
  if (chart.points.empty()) throw Error("points", "no points", "at least one point");
  const auto require_coordinate = [](const std::string& field, double value, AxisScale scale) {
    if (!std::isfinite(value)) throw Error(field, "got " + number_text(value), "a finite number");
    if (scale == AxisScale::log10 && value <= 0)
      throw Error(field, "got " + number_text(value) + " on a log axis", "a number greater than 0");
  };
  for (std::size_t i = 0; i < chart.points.size(); ++i) {
    const std::string item = "points[" + std::to_string(i) + "]";
    require_coordinate(item + ".x", chart.points[i].x, chart.x_scale);
    require_coordinate(item + ".y", chart.points[i].y, chart.y_scale);
  }
  if (chart.highlighted && *chart.highlighted >= chart.points.size())
    throw Error("highlighted", "index " + std::to_string(*chart.highlighted),
                "an index below " + std::to_string(chart.points.size()));
  for (std::size_t i = 0; i < chart.front.size(); ++i) {
    const std::string item = "front[" + std::to_string(i) + "]";
    require_coordinate(item + ".x", chart.front[i].x, chart.x_scale);
    require_coordinate(item + ".y", chart.front[i].y, chart.y_scale);
  }
  if (chart.diagonal_band_fraction) {
    const double f = *chart.diagonal_band_fraction;
    if (!std::isfinite(f) || f < 0 || f >= 1)
      throw Error("diagonal_band_fraction", "got " + number_text(f), "a number from 0 to below 1");
    if (chart.x_scale != chart.y_scale) throw Error("y_scale", "differs from x_scale", "x_scale with a diagonal");
  }
}

Frame make_frame(const ScatterChart& chart) {
  std::vector<double> xs, ys;
  for (const ScatterPoint& p : chart.points) {
    xs.push_back(p.x);
    ys.push_back(p.y);
  }
  AxisDomain x_domain = fit_axis_domain(chart.x_scale, xs, "points.x");
  AxisDomain y_domain = fit_axis_domain(chart.y_scale, ys, "points.y");
  if (chart.diagonal_band_fraction) {  // one shared domain keeps y = x at 45 degrees through the corners
    xs.insert(xs.end(), ys.begin(), ys.end());
    x_domain = y_domain = fit_axis_domain(chart.x_scale, xs, "points");
  }
  const double left = kMarginLeftPx, right = chart.width_px - kMarginRightPx;
  const double top = kMarginTopPx, bottom = chart.height_px - kMarginBottomPx;
  if (right - left < kMinScatterPlotPx) throw Error("width_px", "too small for the plot", "at least 280");
  if (bottom - top < kMinScatterPlotPx) throw Error("height_px", "too small for the plot", "at least 120");
  return {ChartAxis(chart.x_scale, x_domain, left, right),
          ChartAxis(chart.y_scale, y_domain, bottom, top),
          left,
          right,
          top,
          bottom};
}

void draw_axes(SvgCanvas& svg, const Frame& f, const ScatterChart& chart) {
  svg.begin_group("axes");
  for (const double tick : f.x.ticks()) {
    const double x = f.x.to_pixel(tick);
    svg.line({x, f.top_px}, {x, f.bottom_px}, "grid", kGridPaint);
    svg.line({x, f.bottom_px}, {x, f.bottom_px + kTickLengthPx}, "tick", kAxisPaint);
    svg.text({x, f.bottom_px + 16}, f.x.tick_label(tick), TextAnchor::middle, "tick-label");
  }
  for (const double tick : f.y.ticks()) {
    const double y = f.y.to_pixel(tick);
    svg.line({f.left_px, y}, {f.right_px, y}, "grid", kGridPaint);
    svg.line({f.left_px - kTickLengthPx, y}, {f.left_px, y}, "tick", kAxisPaint);
    svg.text({f.left_px - 6, y + 4}, f.y.tick_label(tick), TextAnchor::end, "tick-label");
  }
  svg.rect(f.left_px, f.top_px, f.right_px - f.left_px, f.bottom_px - f.top_px, "frame", kAxisPaint);
  svg.text({(f.left_px + f.right_px) / 2, chart.height_px - 8}, chart.x_label, TextAnchor::middle, "axis-label");
  svg.text({f.left_px, f.top_px - 8}, chart.y_label, TextAnchor::start, "axis-label");
  svg.end_group();
}

// Liang-Barsky: the part of segment a-b inside the plot rectangle, if any.
std::optional<std::pair<PointPx, PointPx>> clip(PointPx a, PointPx b, const Frame& f) {
  double t0 = 0, t1 = 1;
  const double dx = b.x_px - a.x_px, dy = b.y_px - a.y_px;
  const double p[4] = {-dx, dx, -dy, dy};
  const double q[4] = {a.x_px - f.left_px, f.right_px - a.x_px, a.y_px - f.top_px, f.bottom_px - a.y_px};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return std::nullopt;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0)
      t0 = std::max(t0, t);
    else
      t1 = std::min(t1, t);
  }
  if (t0 > t1) return std::nullopt;
  return std::pair{PointPx{a.x_px + t0 * dx, a.y_px + t0 * dy}, PointPx{a.x_px + t1 * dx, a.y_px + t1 * dy}};
}

// y = factor * x is a straight line in pixels on linear-linear and on log-log axes alike.
void draw_ratio_line(SvgCanvas& svg, const Frame& f, double factor, std::string_view css_class, const Paint& paint) {
  const double lo = f.x.domain().min_value, hi = f.x.domain().max_value;
  const auto a = PointPx{f.x.to_pixel(lo), f.y.to_pixel(lo * factor)};
  const auto b = PointPx{f.x.to_pixel(hi), f.y.to_pixel(hi * factor)};
  if (const auto segment = clip(a, b, f)) svg.line(segment->first, segment->second, css_class, paint);
}

void draw_legend_entry(SvgCanvas& svg, double x, double y, std::string_view name, const auto& draw_symbol) {
  svg.begin_group("legend-entry");
  draw_symbol(PointPx{x + 6, y - 4});
  svg.text({x + kLegendGapPx, y}, name, TextAnchor::start, "legend-label");
  svg.end_group();
}

}  // namespace

std::string scatter_chart_svg(const ScatterChart& chart) {
  validate_scatter_chart(chart);
  SvgCanvas svg(chart.width_px, chart.height_px, chart.title);
  const Frame f = make_frame(chart);
  svg.text({chart.width_px / 2, 20}, chart.title, TextAnchor::middle, "chart-title", kTitleFontPx);
  draw_axes(svg, f, chart);
  const std::vector<std::string> categories = categories_in_order(chart.points);
  const auto category_index = [&](const std::string& name) {
    return static_cast<std::size_t>(std::find(categories.begin(), categories.end(), name) - categories.begin());
  };
  const Paint diagonal{"none", "#555555", 1, ""}, band{"none", "#888888", 1, "4 3"};
  if (const auto fraction = chart.diagonal_band_fraction) {
    draw_ratio_line(svg, f, 1.0, "diagonal", diagonal);
    draw_ratio_line(svg, f, 1.0 - *fraction, "diagonal-band", band);
    draw_ratio_line(svg, f, 1.0 + *fraction, "diagonal-band", band);
  }
  const Paint front_paint{"none", "#000000", 1.5, ""};
  if (!chart.front.empty()) {
    std::vector<PointPx> line;
    for (const Point2& p : chart.front) line.push_back({f.x.to_pixel(p.x), f.y.to_pixel(p.y)});
    svg.polyline(line, "front", front_paint);
  }
  svg.begin_group("points");
  for (std::size_t i = 0; i < chart.points.size(); ++i) {
    const ScatterPoint& p = chart.points[i];
    const std::size_t c = category_index(p.category);
    svg.begin_group("point", p.label);
    svg.marker(palette_shape(c), {f.x.to_pixel(p.x), f.y.to_pixel(p.y)}, kMarkerRadiusPx, "",
               Paint{palette_colour(c), "#ffffff", 0.5, ""});
    svg.end_group();
  }
  svg.end_group();
  const Paint winner_paint{"none", "#000000", 2, ""};
  if (chart.highlighted) {
    const ScatterPoint& p = chart.points[*chart.highlighted];
    svg.begin_group("winner", p.label);
    svg.circle({f.x.to_pixel(p.x), f.y.to_pixel(p.y)}, kWinnerRadiusPx, "", winner_paint);
    svg.end_group();
  }
  svg.begin_group("legend");
  const double legend_x = f.right_px + 14;
  double y = f.top_px + 10;
  for (std::size_t c = 0; c < categories.size(); ++c, y += kLegendRowPx)
    draw_legend_entry(svg, legend_x, y, categories[c], [&](PointPx at) {
      svg.marker(palette_shape(c), at, kMarkerRadiusPx, "", Paint{palette_colour(c), "none", 1, ""});
    });
  if (chart.highlighted) {
    draw_legend_entry(svg, legend_x, y, "best",
                      [&](PointPx at) { svg.circle(at, kWinnerRadiusPx - 2, "", winner_paint); });
    y += kLegendRowPx;
  }
  if (!chart.front.empty()) {
    draw_legend_entry(svg, legend_x, y, "Pareto front", [&](PointPx at) {
      svg.line({at.x_px - 6, at.y_px}, {at.x_px + 6, at.y_px}, "", front_paint);
    });
    y += kLegendRowPx;
  }
  if (const auto fraction = chart.diagonal_band_fraction)
    draw_legend_entry(svg, legend_x, y, "y = x \u00b1" + display_number(*fraction * 100) + "%", [&](PointPx at) {
      svg.line({at.x_px - 6, at.y_px}, {at.x_px + 6, at.y_px}, "", band);
    });
  svg.end_group();
  return svg.to_string();
}

}  // namespace tessera::report
