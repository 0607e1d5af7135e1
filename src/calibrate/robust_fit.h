// Robust, bounded nonlinear least squares: the fit behind `tessera calibrate` and the goodput
// controller's online refit.
//
// Variables live in log space (every calibrated quantity is a positive efficiency, time or size,
// and errors of a time model are relative), residuals are log(predicted / measured). The loss is
// soft-L1, rho(r) = 2 d^2 (sqrt(1 + (r/d)^2) - 1): quadratic for |r| << d, linear beyond, so one
// badly measured run cannot drag every parameter (Triggs et al., "Bundle adjustment - a modern
// synthesis", 2000, section 6.8; the same loss as SciPy's least_squares(loss='soft_l1')). It is
// minimised by Levenberg-Marquardt (More 1978, "The Levenberg-Marquardt algorithm:
// implementation and theory") on iteratively reweighted residuals, with each step projected onto
// the variables' bounds. A Gaussian prior per variable (its catalog value, prior_sigma) keeps
// weakly determined combinations where the catalog put them.
//
// Identifiability (`select_identifiable`) decides which variables the data can move at all: a
// pivoted Gram-Schmidt over the Jacobian's columns, in the caller's priority order, keeps a column
// only when the residuals are sensitive to it and it is not (nearly) a combination of the columns
// kept before it. The others stay at their start value and are reported as not identified.
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace tessera {

struct FitVariable {
  double start = 0;        // log of the catalog value
  double lower = 0;        // log of the physical lower bound
  double upper = 0;        // log of the physical upper bound
  double prior_sigma = 0;  // width of the prior around `start` (log units); <= 0: no prior
};

// Fills `residuals` (log(predicted / measured), one per measurement) for the variables `x`.
using ResidualFunction = std::function<void(std::span<const double> x, std::span<double> residuals)>;

// Soft-L1 scale, also the noise one measurement is assumed to carry: 5%, the cost model's
// validated median error per published run (tessera validate on ../shared/validation/), which
// dominates the 1-2% run-to-run spread of repeated steps (vTrain, Bang et al. MICRO'24, 6.1).
// Residuals within it count fully; a 20% outlier about a quarter as much as least squares.
inline constexpr double kDefaultLossScale = 0.05;
inline constexpr int kDefaultMaxIterations = 60;
// Forward-difference step in log space: 0.1% change of a parameter, far above the cost model's
// rounding and below its curvature scale.
inline constexpr double kJacobianStep = 1e-3;

struct RobustFitOptions {
  double loss_scale = kDefaultLossScale;
  int max_iterations = kDefaultMaxIterations;
};

struct RobustFitResult {
  std::vector<double> x;          // fitted variables (log space)
  std::vector<double> sigma;      // standard deviation of each (log units ~ relative); 0 when fixed
  std::vector<bool> at_bound;     // the fit ended on a bound
  std::vector<double> residuals;  // at the solution
  double start_cost = 0, cost = 0;
  int iterations = 0;
};

// Minimises the robust cost over the variables with free[i] (the rest stay at start).
// Preconditions: lower <= start <= upper; residuals.size() == n_residuals.
RobustFitResult robust_fit(std::span<const FitVariable> variables, const std::vector<bool>& free,
                           std::size_t n_residuals, const ResidualFunction& residuals,
                           const RobustFitOptions& options = {});

// Forward-difference Jacobian (row-major, n_residuals x variables) at x; a variable within one
// step of its upper bound is differenced backwards, so no evaluation leaves the bounds.
std::vector<double> jacobian(std::span<const FitVariable> variables, std::span<const double> x,
                             std::size_t n_residuals, const ResidualFunction& residuals,
                             std::span<const double> residuals_at_x);

// The decrease of the robust cost that one Gauss-Newton step over the variables with free[i]
// predicts from the Jacobian at x (1/2 g^T H^-1 g of the local quadratic model; 0 when none is
// free or H is singular). Forward selection ranks candidate parameters by it.
double predicted_cost_decrease(std::span<const FitVariable> variables, const std::vector<bool>& free,
                               std::span<const double> jacobian, std::span<const double> x,
                               std::span<const double> residuals, const RobustFitOptions& options = {});

// A column is kept when its RMS sensitivity is >= min_sensitivity and its component orthogonal to
// the columns kept before it is >= min_independence of its norm; at most max_free are kept.
// Columns are visited in index order (the caller's priority).
struct IdentifiabilityRule {
  double min_sensitivity = 0;
  double min_independence = 0;
  std::size_t max_free = 0;
};
std::vector<bool> select_identifiable(std::span<const double> jacobian, std::size_t n_residuals,
                                      std::size_t n_variables, const IdentifiabilityRule& rule);

// Forward selection (stepwise regression, Efroymson 1960): from no free variable, repeatedly free
// the one whose Gauss-Newton step predicts the largest cost decrease -- among those the rule
// finds sensitive and not (nearly) a combination of the ones already free -- if that decrease
// pays the Bayesian information criterion's price of a parameter (Schwarz 1978: ln(m) / 2 in
// cost units, the cost being chi^2 / 2 at the loss scale), then refit; at most rule.max_free.
// With fewer than kMinMeasurementsForBic measurements the criterion's large-sample price is not
// to be trusted, and a parameter is freed only if it also lowers the leave-one-out cost (Stone
// 1974, "Cross-validatory choice and assessment of statistical predictions"): each measurement's
// loss predicted by the fit of the others, summed (from two measurements up). Two runs of one source that disagree (a dense
// and an MoE row) then move nothing, where one fitted exactly would mispredict the other.
// Burnham & Anderson (2002, "Model Selection and Multimodel Inference", section 2.4): below about
// 40 observations per parameter the large-sample criteria need small-sample corrections.
inline constexpr std::size_t kMinMeasurementsForBic = 40;
// The leave-one-out robust cost of fitting the variables with free[i] (m fits of m - 1 residuals).
double cross_validated_cost(std::span<const FitVariable> variables, const std::vector<bool>& free,
                            std::size_t n_residuals, const ResidualFunction& residuals,
                            const RobustFitOptions& options = {});
struct Selection {
  std::vector<bool> free;
  RobustFitResult fit;
};
Selection forward_selection(std::span<const FitVariable> variables, std::size_t n_residuals,
                            const ResidualFunction& residuals, const IdentifiabilityRule& rule,
                            const RobustFitOptions& options = {});

}  // namespace tessera
