#include "report/chart_axis.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/checks.h"
#include "core/error.h"
#include "report/html_text.h"

namespace tessera::report {

namespace {

constexpr int kTargetTicks = 5;
constexpr int kMaxLogTicks = 10;         // more decades than this: every n-th decade
constexpr double kFewDecades = 3;        // fewer: add 2 and 5 x 10^k
constexpr double kTickTolerance = 1e-9;  // relative slack so a tick on the boundary survives rounding

void require_finite(const std::string& field, double value) {
  if (!std::isfinite(value)) throw Error(field, "got " + number_text(value), "a finite number");
}

std::vector<double> linear_ticks(double min_value, double max_value) {
  const double step = nice_step(max_value - min_value, kTargetTicks);
  const double slack = step * kTickTolerance;
  std::vector<double> ticks;
  for (double k = std::ceil((min_value - slack) / step); k * step <= max_value + slack; k += 1)
    ticks.push_back(k * step == 0.0 ? 0.0 : k * step);  // no "-0"
  return ticks;
}

}  // namespace

double nice_step(double range, int target_count) {
  require_positive_real("range", range, std::numeric_limits<double>::max());
  const double raw = range / std::max(1, target_count);
  const double decade = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double multiple : {1.0, 2.0, 5.0})
    if (multiple * decade >= raw * (1 - kTickTolerance)) return multiple * decade;
  return 10 * decade;
}

AxisDomain fit_axis_domain(AxisScale scale, std::span<const double> values, const std::string& field) {
  if (values.empty()) throw Error(field, "no values", "at least one value");
  double lo = values[0], hi = values[0];
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::string item = field + "[" + std::to_string(i) + "]";
    require_finite(item, values[i]);
    if (scale == AxisScale::log10 && values[i] <= 0)
      throw Error(item, "got " + number_text(values[i]) + " on a log axis", "a number greater than 0");
    lo = std::min(lo, values[i]);
    hi = std::max(hi, values[i]);
  }
  if (scale == AxisScale::log10) {
    AxisDomain domain{std::pow(10.0, std::floor(std::log10(lo))), std::pow(10.0, std::ceil(std::log10(hi)))};
    if (domain.max_value <= domain.min_value) domain.max_value = domain.min_value * 10;
    return domain;
  }
  if (hi == lo) {  // one value: widen by 10% of itself, or by 1 around 0
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double step = nice_step(hi - lo, kTargetTicks);
  return {std::floor(lo / step) * step, std::ceil(hi / step) * step};
}

ChartAxis::ChartAxis(AxisScale scale, AxisDomain domain, double pixel_start, double pixel_end)
    : scale_(scale), domain_(domain), pixel_start_(pixel_start), pixel_end_(pixel_end) {
  require_finite("axis.min_value", domain.min_value);
  require_finite("axis.max_value", domain.max_value);
  require_finite("axis.pixel_start", pixel_start);
  require_finite("axis.pixel_end", pixel_end);
  if (scale == AxisScale::log10 && domain.min_value <= 0)
    throw Error("axis.min_value", "got " + number_text(domain.min_value) + " on a log axis", "a number greater than 0");
  if (domain.max_value <= domain.min_value)
    throw Error("axis.max_value", "got " + number_text(domain.max_value),
                "a number greater than min_value " + number_text(domain.min_value));
}

double ChartAxis::transformed(double value) const { return scale_ == AxisScale::log10 ? std::log10(value) : value; }

double ChartAxis::to_pixel(double value) const {
  const double lo = transformed(domain_.min_value), hi = transformed(domain_.max_value);
  const double fraction = (transformed(value) - lo) / (hi - lo);
  return pixel_start_ + fraction * (pixel_end_ - pixel_start_);
}

std::vector<double> ChartAxis::ticks() const {
  const double lo = domain_.min_value, hi = domain_.max_value;
  if (scale_ == AxisScale::linear) return linear_ticks(lo, hi);
  const double first = std::ceil(std::log10(lo) - kTickTolerance), last = std::floor(std::log10(hi) + kTickTolerance);
  const double decades = std::log10(hi) - std::log10(lo);
  const double stride = std::max(1.0, std::ceil((last - first + 1) / kMaxLogTicks));
  std::vector<double> ticks;
  for (double k = std::floor(std::log10(lo)); k <= last; k += 1) {
    const double decade = std::pow(10.0, k);
    const bool decade_shown = std::fmod(k - first, stride) == 0;
    for (const double multiple : {1.0, 2.0, 5.0}) {
      if (multiple != 1.0 && decades >= kFewDecades) continue;
      if (multiple == 1.0 && !decade_shown) continue;
      const double tick = multiple * decade;
      if (tick >= lo * (1 - kTickTolerance) && tick <= hi * (1 + kTickTolerance)) ticks.push_back(tick);
    }
  }
  // A range inside one decade (e.g. 3 to 4) has no 1/2/5 tick at all: fall back to linear steps.
  if (ticks.size() < 2) return linear_ticks(lo, hi);
  return ticks;
}

std::string ChartAxis::tick_label(double value) const { return display_number(value); }

}  // namespace tessera::report
