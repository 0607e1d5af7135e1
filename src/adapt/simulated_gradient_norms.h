// Squared gradient norms as a training job would measure them, drawn from their exact
// distribution, for the run simulator and tests. Per-example gradients are G + xi with
// xi ~ N(0, (tr(Sigma) / d) I_d): the mean of n of them is G + N(0, tr(Sigma) / (n d) I_d), whose
// squared norm is (tr(Sigma) / (n d)) x a noncentral chi-square with d degrees of freedom and
// noncentrality n d |G|^2 / tr(Sigma). A batch of B = k b examples split into k micro-batches of b:
// sum_i |mean_i|^2 = sum_i |mean_i - mean|^2 + k |mean|^2, the first term an independent
// (tr(Sigma) / (b d)) chi-square with d (k - 1) degrees of freedom. Sums over steps add degrees of
// freedom and noncentralities.
#pragma once

#include <cstdint>
#include <random>

namespace tessera {

struct MeasuredSquaredNorms {
  double small_sq_norm = 0;  // mean over micro-batches of |micro-batch mean gradient|^2
  double big_sq_norm = 0;    // |batch mean gradient|^2
};

// Averages over `steps` steps. Requires 1 <= small_batch < big_batch with big_batch a multiple of
// small_batch, trace_covariance >= 0, gradient_sq_norm >= 0, dimension >= 1, steps >= 1 (throws
// Error otherwise).
MeasuredSquaredNorms sample_squared_norms(std::mt19937_64& rng, double gradient_sq_norm, double trace_covariance,
                                          double dimension, std::int64_t small_batch, std::int64_t big_batch,
                                          std::int64_t steps);

}  // namespace tessera
