// ScatterChart: the spec of a scatter plot (candidate plans: step time against memory; or
// predicted against measured) and its rendering to an inline SVG with axes, legend, an optional
// highlighted winner, Pareto-front polyline and y = x diagonal with a +/- band.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "report/chart_axis.h"
#include "report/pareto_front.h"

namespace tessera::report {

struct ScatterPoint {
  double x = 0;
  double y = 0;
  std::string category;  // one colour and marker shape per category, in order of first appearance
  std::string label;     // tooltip; empty for none
};

struct ScatterChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  AxisScale x_scale = AxisScale::linear;
  AxisScale y_scale = AxisScale::linear;
  std::vector<ScatterPoint> points;
  std::optional<std::size_t> highlighted;  // index into points (the winner), drawn larger and ringed
  std::vector<Point2> front;               // polyline in data coordinates (e.g. the Pareto front); may be empty
  // y = x and the lines y = x (1 +/- fraction); both axes then share one domain and scale.
  std::optional<double> diagonal_band_fraction;
  double width_px = 720;
  double height_px = 420;
};

// Throws tessera::Error naming the field: "points" (empty), "points[i].x" / ".y" (non-finite, or
// <= 0 on a log axis), "highlighted" (out of range), "front[i].x" / ".y", "diagonal_band_fraction"
// (outside [0, 1)), "y_scale" (differs from x_scale with a diagonal), "width_px" / "height_px".
std::string scatter_chart_svg(const ScatterChart& chart);

}  // namespace tessera::report
