// ChartAxis: a linear or log10 axis of a chart: value -> pixel mapping, "nice" tick values
// (1/2/5 x 10^k steps for linear; decades for log, plus 2 and 5 x 10^k when the range spans fewer
// than 3 decades) and their labels; `fit_axis_domain` picks a padded domain around data.
#pragma once

#include <span>
#include <string>
#include <vector>

namespace tessera::report {

enum class AxisScale { linear, log10 };

struct AxisDomain {
  double min_value = 0;
  double max_value = 1;
};

// A domain that holds every value and ends on nice ticks (whole decades for log). A single value
// is widened around itself. Throws tessera::Error naming `field` for an empty list, a non-finite
// value or, on a log axis, a value <= 0.
AxisDomain fit_axis_domain(AxisScale scale, std::span<const double> values, const std::string& field);

class ChartAxis {
 public:
  // Maps [min_value, max_value] onto [pixel_start, pixel_end] (pixel_end < pixel_start is fine:
  // a y axis grows upwards). Throws tessera::Error ("axis.min_value", "axis.max_value") unless
  // min < max, both finite, and both > 0 on a log axis.
  ChartAxis(AxisScale scale, AxisDomain domain, double pixel_start, double pixel_end);

  double to_pixel(double value) const;
  std::vector<double> ticks() const;
  std::string tick_label(double value) const;

  AxisScale scale() const { return scale_; }
  AxisDomain domain() const { return domain_; }
  double pixel_start() const { return pixel_start_; }
  double pixel_end() const { return pixel_end_; }

 private:
  double transformed(double value) const;

  AxisScale scale_;
  AxisDomain domain_;
  double pixel_start_;
  double pixel_end_;
};

// The 1/2/5 x 10^k step that gives about `target_count` ticks over `range` (> 0).
double nice_step(double range, int target_count);

}  // namespace tessera::report
