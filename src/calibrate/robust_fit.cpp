#include "calibrate/robust_fit.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tessera {

namespace {

// Levenberg-Marquardt damping: start small (close to Gauss-Newton), grow on a rejected step,
// shrink on an accepted one (More 1978, section 3).
constexpr double kInitialDamping = 1e-3;
constexpr double kDampingUp = 4.0;
constexpr double kDampingDown = 3.0;
constexpr double kMaxDamping = 1e10;
// Stop when a step changes the cost by less than this fraction, or moves no variable by more than
// kStepTolerance (log units: 1e-7 relative change).
constexpr double kCostTolerance = 1e-10;
constexpr double kStepTolerance = 1e-7;

double soft_l1(double r, double scale) {
  const double z = r / scale;
  return 2.0 * scale * scale * (std::sqrt(1.0 + z * z) - 1.0);
}
// IRLS weight rho'(r) / r of the soft-L1 loss.
double soft_l1_weight(double r, double scale) {
  const double z = r / scale;
  return 1.0 / std::sqrt(1.0 + z * z);
}

double prior_term(const FitVariable& v, double x) {
  if (v.prior_sigma <= 0) return 0.0;
  const double z = (x - v.start) / v.prior_sigma;
  return 0.5 * z * z;
}

// The data term is in units of the loss scale (the assumed noise of one measurement), so the
// prior's sigma and the residuals' scale are weighed against each other as their variances.
double robust_cost(std::span<const FitVariable> vars, std::span<const double> x, std::span<const double> r,
                   double scale) {
  double cost = 0;
  for (double ri : r) cost += 0.5 * soft_l1(ri, scale) / (scale * scale);
  for (std::size_t j = 0; j < vars.size(); ++j) cost += prior_term(vars[j], x[j]);
  return cost;
}

// Solves the symmetric positive definite system a * out = b (n x n, row-major) by Cholesky;
// false when a is not positive definite.
bool cholesky_solve(std::vector<double> a, std::vector<double> b, std::size_t n, std::vector<double>& out) {
  for (std::size_t j = 0; j < n; ++j) {
    double d = a[j * n + j];
    for (std::size_t k = 0; k < j; ++k) d -= a[j * n + k] * a[j * n + k];
    if (!(d > 0)) return false;
    const double l = std::sqrt(d);
    a[j * n + j] = l;
    for (std::size_t i = j + 1; i < n; ++i) {
      double s = a[i * n + j];
      for (std::size_t k = 0; k < j; ++k) s -= a[i * n + k] * a[j * n + k];
      a[i * n + j] = s / l;
    }
  }
  for (std::size_t i = 0; i < n; ++i) {  // L y = b
    double s = b[i];
    for (std::size_t k = 0; k < i; ++k) s -= a[i * n + k] * b[k];
    b[i] = s / a[i * n + i];
  }
  for (std::size_t i = n; i-- > 0;) {  // L^T x = y
    double s = b[i];
    for (std::size_t k = i + 1; k < n; ++k) s -= a[k * n + i] * b[k];
    b[i] = s / a[i * n + i];
  }
  out = std::move(b);
  return true;
}

// The normal equations of the weighted, prior-regularised problem over the free variables:
// h = J^T W J / noise^2 + P, g = J^T W r / noise^2 + P (x - start), W the IRLS weights of the
// soft-L1 loss at `scale`.
struct NormalEquations {
  std::vector<double> h, g;
};
NormalEquations normal_equations(std::span<const FitVariable> vars, const std::vector<std::size_t>& free_index,
                                 std::span<const double> jac, std::span<const double> x,
                                 std::span<const double> r, double scale, double noise) {
  const std::size_t n = vars.size(), p = free_index.size(), m = r.size();
  NormalEquations eq{std::vector<double>(p * p, 0.0), std::vector<double>(p, 0.0)};
  const double inv_noise2 = 1.0 / (noise * noise);
  for (std::size_t i = 0; i < m; ++i) {
    const double w = soft_l1_weight(r[i], scale) * inv_noise2;
    for (std::size_t a = 0; a < p; ++a) {
      const double ja = jac[i * n + free_index[a]];
      eq.g[a] += w * ja * r[i];
      for (std::size_t b = 0; b < p; ++b) eq.h[a * p + b] += w * ja * jac[i * n + free_index[b]];
    }
  }
  for (std::size_t a = 0; a < p; ++a) {
    const FitVariable& v = vars[free_index[a]];
    if (v.prior_sigma <= 0) continue;
    const double inv = 1.0 / (v.prior_sigma * v.prior_sigma);
    eq.h[a * p + a] += inv;
    eq.g[a] += inv * (x[free_index[a]] - v.start);
  }
  return eq;
}

// Measurement noise assumed at least: a fit through few points can be exact, but repeated
// training steps still spread by ~1% (vTrain, Bang et al. MICRO'24, section 6.1).
constexpr double kNoiseFloor = 0.01;

// The residuals' noise as measured: the weighted residual sum over the degrees of freedom, at
// least the noise floor.
double residual_noise(std::size_t p, std::span<const double> r, double scale) {
  double rss = 0;
  for (double ri : r) rss += soft_l1_weight(ri, scale) * ri * ri;
  const double dof = r.size() > p ? static_cast<double>(r.size() - p) : 1.0;
  return std::max(std::sqrt(rss / dof), kNoiseFloor);
}

// Standard deviations: the diagonal of the inverse of h (the posterior covariance with the
// measured noise).
std::vector<double> sigmas(const NormalEquations& eq, std::size_t p) {
  std::vector<double> out(p, 0.0);
  for (std::size_t a = 0; a < p; ++a) {
    std::vector<double> e(p, 0.0), col;
    e[a] = 1.0;
    if (cholesky_solve(eq.h, e, p, col)) out[a] = std::sqrt(std::max(0.0, col[a]));
  }
  return out;
}

}  // namespace

std::vector<double> jacobian(std::span<const FitVariable> vars, std::span<const double> x, std::size_t m,
                             const ResidualFunction& f, std::span<const double> r0) {
  const std::size_t n = x.size();
  std::vector<double> jac(m * n, 0.0), xs(x.begin(), x.end()), r(m);
  for (std::size_t j = 0; j < n; ++j) {
    const double step = x[j] + kJacobianStep > vars[j].upper ? -kJacobianStep : kJacobianStep;
    xs[j] = x[j] + step;
    f(xs, r);
    for (std::size_t i = 0; i < m; ++i) jac[i * n + j] = (r[i] - r0[i]) / step;
    xs[j] = x[j];
  }
  return jac;
}

double predicted_cost_decrease(std::span<const FitVariable> vars, const std::vector<bool>& free,
                               std::span<const double> jac, std::span<const double> x, std::span<const double> r,
                               const RobustFitOptions& options) {
  std::vector<std::size_t> free_index;
  for (std::size_t j = 0; j < vars.size(); ++j)
    if (free[j]) free_index.push_back(j);
  if (free_index.empty()) return 0.0;
  const std::size_t p = free_index.size();
  const NormalEquations eq = normal_equations(vars, free_index, jac, x, r, options.loss_scale, options.loss_scale);
  std::vector<double> step;
  if (!cholesky_solve(eq.h, eq.g, p, step)) return 0.0;
  double decrease = 0;
  for (std::size_t a = 0; a < p; ++a) decrease += 0.5 * eq.g[a] * step[a];
  return decrease;
}

std::vector<bool> select_identifiable(std::span<const double> jac, std::size_t m, std::size_t n,
                                      const IdentifiabilityRule& rule) {
  std::vector<bool> keep(n, false);
  std::vector<std::vector<double>> basis;  // orthonormal columns kept so far
  for (std::size_t j = 0; j < n && basis.size() < rule.max_free; ++j) {
    std::vector<double> c(m);
    double norm2 = 0;
    for (std::size_t i = 0; i < m; ++i) norm2 += (c[i] = jac[i * n + j]) * c[i];
    const double rms = m > 0 ? std::sqrt(norm2 / static_cast<double>(m)) : 0.0;
    if (!(rms >= rule.min_sensitivity)) continue;
    for (const auto& q : basis) {  // modified Gram-Schmidt
      double dot = 0;
      for (std::size_t i = 0; i < m; ++i) dot += q[i] * c[i];
      for (std::size_t i = 0; i < m; ++i) c[i] -= dot * q[i];
    }
    double rest2 = 0;
    for (double ci : c) rest2 += ci * ci;
    if (std::sqrt(rest2) < rule.min_independence * std::sqrt(norm2)) continue;
    const double inv = 1.0 / std::sqrt(rest2);
    for (double& ci : c) ci *= inv;
    basis.push_back(std::move(c));
    keep[j] = true;
  }
  return keep;
}

RobustFitResult robust_fit(std::span<const FitVariable> vars, const std::vector<bool>& free, std::size_t m,
                           const ResidualFunction& f, const RobustFitOptions& options) {
  const std::size_t n = vars.size();
  RobustFitResult out;
  out.x.resize(n);
  for (std::size_t j = 0; j < n; ++j) out.x[j] = vars[j].start;
  out.residuals.resize(m);
  f(out.x, out.residuals);
  out.start_cost = out.cost = robust_cost(vars, out.x, out.residuals, options.loss_scale);
  out.sigma.assign(n, 0.0);
  out.at_bound.assign(n, false);
  std::vector<std::size_t> free_index;
  for (std::size_t j = 0; j < n; ++j)
    if (free[j]) free_index.push_back(j);
  const std::size_t p = free_index.size();
  if (p == 0 || m == 0) return out;

  double damping = kInitialDamping;
  std::vector<double> trial_x(n), trial_r(m), step;
  std::vector<double> jac = jacobian(vars, out.x, m, f, out.residuals);
  bool converged = false;
  for (out.iterations = 0; out.iterations < options.max_iterations && !converged; ++out.iterations) {
    const NormalEquations eq =
        normal_equations(vars, free_index, jac, out.x, out.residuals, options.loss_scale, options.loss_scale);
    bool accepted = false;
    double max_move = 0;
    while (!accepted && damping < kMaxDamping) {
      std::vector<double> h = eq.h, g(p);
      for (std::size_t a = 0; a < p; ++a) {
        h[a * p + a] *= 1.0 + damping;
        g[a] = -eq.g[a];
      }
      if (!cholesky_solve(h, g, p, step)) {
        damping *= kDampingUp;
        continue;
      }
      trial_x = out.x;
      max_move = 0;
      for (std::size_t a = 0; a < p; ++a) {
        const FitVariable& v = vars[free_index[a]];
        double& xj = trial_x[free_index[a]];
        xj = std::clamp(xj + step[a], v.lower, v.upper);  // projection onto the bounds
        max_move = std::max(max_move, std::abs(xj - out.x[free_index[a]]));
      }
      f(trial_x, trial_r);
      const double cost = robust_cost(vars, trial_x, trial_r, options.loss_scale);
      if (cost <= out.cost) {
        const double gain = out.cost - cost;
        out.x = trial_x;
        out.residuals = trial_r;
        out.cost = cost;
        damping = std::max(damping / kDampingDown, 1e-12);
        accepted = true;
        converged = gain <= kCostTolerance * std::max(out.cost, 1e-300) || max_move < kStepTolerance;
      } else {
        damping *= kDampingUp;
      }
    }
    if (!accepted) break;
    if (!converged) jac = jacobian(vars, out.x, m, f, out.residuals);
  }
  jac = jacobian(vars, out.x, m, f, out.residuals);
  const double noise = residual_noise(p, out.residuals, options.loss_scale);
  const NormalEquations eq = normal_equations(vars, free_index, jac, out.x, out.residuals, options.loss_scale, noise);
  const std::vector<double> s = sigmas(eq, p);
  for (std::size_t a = 0; a < p; ++a) {
    const std::size_t j = free_index[a];
    out.sigma[j] = s[a];
    const double span = vars[j].upper - vars[j].lower;
    out.at_bound[j] = std::min(out.x[j] - vars[j].lower, vars[j].upper - out.x[j]) <= 1e-6 * std::max(span, 1.0);
  }
  return out;
}

namespace {
// True when freeing column j next to the free ones passes the rule: sensitive, and not (nearly) a
// combination of the free columns.
bool adds_information(std::span<const double> jac, std::size_t m, std::size_t n, const std::vector<bool>& free,
                      std::size_t j, const IdentifiabilityRule& rule) {
  std::vector<std::size_t> columns;
  for (std::size_t k = 0; k < n; ++k)
    if (free[k]) columns.push_back(k);
  columns.push_back(j);
  std::vector<double> sub(m * columns.size());
  for (std::size_t i = 0; i < m; ++i)
    for (std::size_t c = 0; c < columns.size(); ++c) sub[i * columns.size() + c] = jac[i * n + columns[c]];
  IdentifiabilityRule all = rule;
  all.max_free = columns.size();
  return select_identifiable(sub, m, columns.size(), all).back();
}
}  // namespace

double cross_validated_cost(std::span<const FitVariable> vars, const std::vector<bool>& free, std::size_t m,
                            const ResidualFunction& f, const RobustFitOptions& options) {
  const double scale = options.loss_scale;
  std::vector<double> all(m);
  double cost = 0;
  for (std::size_t held = 0; held < m; ++held) {
    // A residual fixed at 0 weighs nothing in the fit: the fit does not see measurement `held`.
    const ResidualFunction without = [&](std::span<const double> x, std::span<double> r) {
      f(x, r);
      r[held] = 0.0;
    };
    const RobustFitResult fit = robust_fit(vars, free, m, without, options);
    f(fit.x, all);
    cost += 0.5 * soft_l1(all[held], scale) / (scale * scale);
  }
  return cost;
}

Selection forward_selection(std::span<const FitVariable> vars, std::size_t m, const ResidualFunction& f,
                            const IdentifiabilityRule& rule, const RobustFitOptions& options) {
  const std::size_t n = vars.size();
  Selection out{std::vector<bool>(n, false), {}};
  out.fit = robust_fit(vars, out.free, m, f, options);
  const double price = 0.5 * std::log(static_cast<double>(std::max<std::size_t>(m, 2)));
  // Sensitivity is judged at the start (the catalog), where every term has its catalog weight.
  const std::vector<double> jac = jacobian(vars, out.fit.x, m, f, out.fit.residuals);
  for (std::size_t count = 0; count < rule.max_free; ++count) {
    std::size_t best = n;
    double best_gain = price;
    RobustFitResult best_fit;
    for (std::size_t j = 0; j < n; ++j) {
      if (out.free[j] || !adds_information(jac, m, n, out.free, j, rule)) continue;
      std::vector<bool> trial = out.free;
      trial[j] = true;
      // Each candidate set is refitted from the start, not stepped from the current fit: a term
      // bound by a minimum (a ring limited by NVLink or by the NICs) can hide another's effect
      // once the first has moved alone.
      RobustFitResult fit = robust_fit(vars, trial, m, f, options);
      const double gain = out.fit.cost - fit.cost;
      if (gain > best_gain) {
        best = j;
        best_gain = gain;
        best_fit = std::move(fit);
      }
    }
    if (best == n) break;
    std::vector<bool> chosen = out.free;
    chosen[best] = true;
    // Few measurements: BIC's price is asymptotic, so the parameter must also predict the
    // measurements it was not fitted on better than the set without it (one measurement leaves
    // none to hold out: the criterion alone decides).
    if (m >= 2 && m < kMinMeasurementsForBic &&
        cross_validated_cost(vars, chosen, m, f, options) >= cross_validated_cost(vars, out.free, m, f, options))
      break;
    out.free = std::move(chosen);
    out.fit = std::move(best_fit);
  }
  return out;
}

}  // namespace tessera
