#include "adapt/simulated_gradient_norms.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace tessera {

namespace {

double chi_square(std::mt19937_64& rng, double dof) {
  if (dof <= 0.0) return 0.0;
  return std::gamma_distribution<double>(dof / 2.0, 2.0)(rng);
}

// (Z + sqrt(lambda))^2 + chi^2(dof - 1).
double noncentral_chi_square(std::mt19937_64& rng, double dof, double noncentrality) {
  const double z = std::normal_distribution<double>(0.0, 1.0)(rng) + std::sqrt(noncentrality);
  return z * z + chi_square(rng, dof - 1.0);
}

}  // namespace

MeasuredSquaredNorms sample_squared_norms(std::mt19937_64& rng, double gradient_sq_norm, double trace_covariance,
                                          double dimension, std::int64_t small_batch, std::int64_t big_batch,
                                          std::int64_t steps) {
  if (small_batch < 1 || big_batch <= small_batch || big_batch % small_batch != 0)
    throw Error("big_batch", std::to_string(big_batch) + " with small_batch " + std::to_string(small_batch),
                "a multiple of small_batch greater than it");
  if (!(trace_covariance >= 0.0) || !(gradient_sq_norm >= 0.0) || !(dimension >= 1.0) || steps < 1)
    throw Error("sample_squared_norms", "invalid arguments",
                "gradient_sq_norm >= 0, trace_covariance >= 0, dimension >= 1, steps >= 1");
  const double n_steps = static_cast<double>(steps);
  const double big = static_cast<double>(big_batch), small = static_cast<double>(small_batch);
  const double k = big / small;
  const double per_direction = trace_covariance / dimension;  // variance of one example, one direction
  MeasuredSquaredNorms m;
  if (per_direction == 0.0) {
    m.big_sq_norm = m.small_sq_norm = gradient_sq_norm;
    return m;
  }
  const double noncentrality = big * gradient_sq_norm / per_direction;
  m.big_sq_norm = per_direction / big * noncentral_chi_square(rng, n_steps * dimension, n_steps * noncentrality) / n_steps;
  const double spread = per_direction / small * chi_square(rng, n_steps * dimension * (k - 1.0)) / n_steps;
  m.small_sq_norm = m.big_sq_norm + spread / k;
  return m;
}

}  // namespace tessera
