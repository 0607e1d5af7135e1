#include "report/chart_axis.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "common/thrown_field.h"

namespace tessera::report {
namespace {

using tessera::testing::thrown_field;

// m x 10^k with m in {1, 2, 5}.
bool is_nice(double value) {
  if (value == 0) return true;
  const double mantissa = std::fabs(value) / std::pow(10.0, std::floor(std::log10(std::fabs(value))));
  for (const double m : {1.0, 2.0, 5.0, 10.0})
    if (std::fabs(mantissa - m) < 1e-9) return true;
  return false;
}

void expect_ticks_within(const ChartAxis& axis) {
  const std::vector<double> ticks = axis.ticks();
  ASSERT_GE(ticks.size(), 2u);
  for (std::size_t i = 0; i < ticks.size(); ++i) {
    EXPECT_GE(ticks[i], axis.domain().min_value * (1 - 1e-9));
    EXPECT_LE(ticks[i], axis.domain().max_value * (1 + 1e-9));
    if (i > 0) {
      EXPECT_GT(ticks[i], ticks[i - 1]);
    }
  }
}

TEST(ChartAxis, MapsEndsAndIsMonotone) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> unit(0, 1);
  for (const AxisScale scale : {AxisScale::linear, AxisScale::log10}) {
    const ChartAxis x(scale, {0.5, 5000}, 10, 410);
    const ChartAxis y(scale, {0.5, 5000}, 300, 20);  // y grows upwards
    EXPECT_DOUBLE_EQ(x.to_pixel(0.5), 10);
    EXPECT_DOUBLE_EQ(x.to_pixel(5000), 410);
    EXPECT_DOUBLE_EQ(y.to_pixel(5000), 20);
    for (int trial = 0; trial < 200; ++trial) {
      const double a = 0.5 + unit(rng) * 4999.5, b = 0.5 + unit(rng) * 4999.5;
      if (a == b) continue;
      EXPECT_EQ(a < b, x.to_pixel(a) < x.to_pixel(b));
      EXPECT_EQ(a<b, y.to_pixel(a)> y.to_pixel(b));
    }
  }
  EXPECT_DOUBLE_EQ(ChartAxis(AxisScale::log10, {1, 100}, 0, 100).to_pixel(10), 50);
}

TEST(ChartAxis, LinearTicksAreEvenNiceSteps) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> value(-1e4, 1e4);
  for (int trial = 0; trial < 300; ++trial) {
    double lo = value(rng), hi = value(rng);
    if (lo == hi) continue;
    if (lo > hi) std::swap(lo, hi);
    const ChartAxis axis(AxisScale::linear, {lo, hi}, 0, 500);
    const std::vector<double> ticks = axis.ticks();
    ASSERT_GE(ticks.size(), 2u) << lo << " " << hi;
    const double step = ticks[1] - ticks[0];
    EXPECT_TRUE(is_nice(step)) << step;
    EXPECT_LE(ticks.size(), 11u);
    for (std::size_t i = 0; i < ticks.size(); ++i) {
      EXPECT_GE(ticks[i], lo - 1e-9 * step);
      EXPECT_LE(ticks[i], hi + 1e-9 * step);
      EXPECT_NEAR(ticks[i] - ticks[0], static_cast<double>(i) * step, 1e-6 * step);
    }
  }
  EXPECT_EQ(ChartAxis(AxisScale::linear, {0, 10}, 0, 1).ticks(), (std::vector<double>{0, 2, 4, 6, 8, 10}));
}

TEST(ChartAxis, LogTicksAreDecadesPlusTwoAndFiveWhenFew) {
  EXPECT_EQ(ChartAxis(AxisScale::log10, {1, 1e5}, 0, 1).ticks(), (std::vector<double>{1, 10, 100, 1e3, 1e4, 1e5}));
  EXPECT_EQ(ChartAxis(AxisScale::log10, {1, 100}, 0, 1).ticks(), (std::vector<double>{1, 2, 5, 10, 20, 50, 100}));
  const std::size_t many_decades = ChartAxis(AxisScale::log10, {1e-20, 1e20}, 0, 1).ticks().size();
  EXPECT_GE(many_decades, 5u);  // thinned to every n-th decade
  EXPECT_LE(many_decades, 10u);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> exponent(-6, 9);
  for (int trial = 0; trial < 300; ++trial) {
    double lo = std::pow(10.0, exponent(rng)), hi = std::pow(10.0, exponent(rng));
    if (lo == hi) continue;
    if (lo > hi) std::swap(lo, hi);
    const ChartAxis axis(AxisScale::log10, {lo, hi}, 0, 500);
    expect_ticks_within(axis);
    const std::vector<double> ticks = axis.ticks();
    if (std::all_of(ticks.begin(), ticks.end(), is_nice)) continue;
    // Inside one decade no 1/2/5 tick may exist: then even linear steps of a nice size.
    const double step = ticks[1] - ticks[0];
    EXPECT_TRUE(is_nice(step)) << step << " in " << lo << ".." << hi;
    for (std::size_t i = 1; i < ticks.size(); ++i) EXPECT_NEAR(ticks[i] - ticks[i - 1], step, 1e-6 * step);
  }
}

TEST(ChartAxis, FittedDomainHoldsTheValuesOnNiceEnds) {
  const std::vector<double> values = {3.2, 47.9, 12};
  const AxisDomain linear = fit_axis_domain(AxisScale::linear, values, "v");
  EXPECT_DOUBLE_EQ(linear.min_value, 0);
  EXPECT_DOUBLE_EQ(linear.max_value, 50);
  const AxisDomain log = fit_axis_domain(AxisScale::log10, values, "v");
  EXPECT_DOUBLE_EQ(log.min_value, 1);
  EXPECT_DOUBLE_EQ(log.max_value, 100);
  const AxisDomain single = fit_axis_domain(AxisScale::log10, std::vector<double>{10}, "v");
  EXPECT_LT(single.min_value, single.max_value);
  const AxisDomain zero = fit_axis_domain(AxisScale::linear, std::vector<double>{0}, "v");
  EXPECT_LT(zero.min_value, 0);
  EXPECT_GT(zero.max_value, 0);
  EXPECT_EQ(ChartAxis(AxisScale::linear, linear, 0, 1).tick_label(1234), "1230");
}

TEST(ChartAxis, InvalidInputNamesTheField) {
  EXPECT_EQ(thrown_field([] { ChartAxis(AxisScale::linear, {1, 1}, 0, 1); }), "axis.max_value");
  EXPECT_EQ(thrown_field([] { ChartAxis(AxisScale::linear, {NAN, 1}, 0, 1); }), "axis.min_value");
  EXPECT_EQ(thrown_field([] { ChartAxis(AxisScale::log10, {0, 1}, 0, 1); }), "axis.min_value");
  EXPECT_EQ(thrown_field([] { fit_axis_domain(AxisScale::linear, {}, "v"); }), "v");
  EXPECT_EQ(thrown_field([] { fit_axis_domain(AxisScale::log10, std::vector<double>{1, -2}, "v"); }), "v[1]");
  EXPECT_EQ(thrown_field([] { fit_axis_domain(AxisScale::linear, std::vector<double>{NAN}, "v"); }), "v[0]");
}

}  // namespace
}  // namespace tessera::report
