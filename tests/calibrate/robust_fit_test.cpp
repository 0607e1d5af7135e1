#include "calibrate/robust_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace tessera {
namespace {

// r_i = a + b t_i - y_i: a linear model, so Gauss-Newton's answer is the closed-form regression.
struct LinearData {
  std::vector<double> t, y;
};
LinearData line(double a, double b, std::size_t n) {
  LinearData d;
  for (std::size_t i = 0; i < n; ++i) {
    d.t.push_back(static_cast<double>(i) / static_cast<double>(n));
    d.y.push_back(a + b * d.t.back());
  }
  return d;
}
ResidualFunction residuals_of(const LinearData& d) {
  return [&d](std::span<const double> x, std::span<double> r) {
    for (std::size_t i = 0; i < d.t.size(); ++i) r[i] = x[0] + x[1] * d.t[i] - d.y[i];
  };
}
std::vector<FitVariable> free_vars(double lo = -10, double hi = 10) { return {{0, lo, hi, 0}, {0, lo, hi, 0}}; }

TEST(RobustFit, RecoversAnExactLinearModel) {
  const LinearData d = line(0.3, -0.7, 12);
  const auto vars = free_vars();
  const RobustFitResult fit = robust_fit(vars, {true, true}, d.t.size(), residuals_of(d));
  EXPECT_NEAR(fit.x[0], 0.3, 1e-6);
  EXPECT_NEAR(fit.x[1], -0.7, 1e-6);
  EXPECT_LT(fit.cost, 1e-10);
  EXPECT_LT(fit.cost, fit.start_cost);
}

TEST(RobustFit, OneOutlierMovesSoftL1FarLessThanLeastSquares) {
  LinearData d = line(0.1, 0.0, 21);
  d.y[7] += 0.5;  // a 65% slow run among runs that agree
  const auto vars = free_vars();
  const RobustFitResult robust = robust_fit(vars, {true, false}, d.t.size(), residuals_of(d));
  RobustFitOptions least_squares;
  least_squares.loss_scale = 1e6;  // soft-L1 with a huge scale is plain least squares
  const RobustFitResult ls = robust_fit(vars, {true, false}, d.t.size(), residuals_of(d), least_squares);
  EXPECT_NEAR(ls.x[0], 0.1 + 0.5 / 21.0, 1e-6);  // the mean shifts by outlier / n
  EXPECT_LT(std::abs(robust.x[0] - 0.1), 0.25 * std::abs(ls.x[0] - 0.1));
}

TEST(RobustFit, StopsAtABoundAndSaysSo) {
  const LinearData d = line(2.0, 0.0, 5);
  const std::vector<FitVariable> vars = {{0, -1, 1, 0}, {0, -1, 1, 0}};
  const RobustFitResult fit = robust_fit(vars, {true, false}, d.t.size(), residuals_of(d));
  EXPECT_DOUBLE_EQ(fit.x[0], 1.0);
  EXPECT_TRUE(fit.at_bound[0]);
  EXPECT_DOUBLE_EQ(fit.x[1], 0.0);  // not free: stays at its start
  EXPECT_DOUBLE_EQ(fit.sigma[1], 0.0);
}

TEST(RobustFit, PriorAndDataAreWeighedByTheirVariances) {
  // One residual r = x - c with noise d (the loss scale) and a prior of sigma s around 0: the
  // minimum of (x-c)^2/(2 d^2) + x^2/(2 s^2) is x = c s^2 / (s^2 + d^2). c << d keeps the soft-L1
  // loss in its quadratic range (relative error ~ (r/d)^2 / 4).
  const double c = 1e-3, d = 0.1, s = 0.05;
  const std::vector<FitVariable> vars = {{0, -5, 5, s}};
  RobustFitOptions options;
  options.loss_scale = d;
  const RobustFitResult fit =
      robust_fit(vars, {true}, 1, [c](std::span<const double> x, std::span<double> r) { r[0] = x[0] - c; }, options);
  EXPECT_NEAR(fit.x[0], c * s * s / (s * s + d * d), 1e-8);
}

TEST(RobustFit, SigmaOfAMeanIsTheStandardError) {
  // y_i = m + e_i with e_i = +-0.05 alternating: the mean's standard error is sd / sqrt(n - 1)
  // over n - 1 degrees of freedom: sqrt(sum e^2 / (n - 1)) / sqrt(n).
  const std::size_t n = 40;
  std::vector<double> y(n);
  for (std::size_t i = 0; i < n; ++i) y[i] = 1.0 + (i % 2 ? 0.05 : -0.05);
  const std::vector<FitVariable> vars = {{0, -5, 5, 0}};
  RobustFitOptions ls;
  ls.loss_scale = 1e6;
  const RobustFitResult fit = robust_fit(
      vars, {true}, n, [&y](std::span<const double> x, std::span<double> r) {
        for (std::size_t i = 0; i < y.size(); ++i) r[i] = x[0] - y[i];
      }, ls);
  EXPECT_NEAR(fit.x[0], 1.0, 1e-9);
  const double expected = std::sqrt(n * 0.05 * 0.05 / (n - 1)) / std::sqrt(static_cast<double>(n));
  EXPECT_NEAR(fit.sigma[0], expected, 1e-6);
}

TEST(SelectIdentifiable, DropsInsensitiveAndConfoundedColumnsAndHonoursTheCap) {
  // Columns: sensitive, zero, a copy of the first (confounded), independent, another independent.
  const std::size_t m = 4, n = 5;
  const std::vector<double> jac = {1, 0, 1, 0, 1,  //
                                   1, 0, 1, 1, 0,  //
                                   1, 0, 1, 0, 0,  //
                                   1, 0, 1, 1, 1};
  const IdentifiabilityRule rule{0.05, 0.3, 3};
  EXPECT_EQ(select_identifiable(jac, m, n, rule), (std::vector<bool>{true, false, false, true, true}));
  const IdentifiabilityRule capped{0.05, 0.3, 2};
  EXPECT_EQ(select_identifiable(jac, m, n, capped), (std::vector<bool>{true, false, false, true, false}));
}

}  // namespace
}  // namespace tessera
