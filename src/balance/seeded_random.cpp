#include "balance/seeded_random.h"

#include <cmath>
#include <numbers>

namespace tessera {

double SeededRandom::normal() {
  const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

double SeededRandom::lognormal(double median, double sigma) { return median * std::exp(sigma * normal()); }

}  // namespace tessera
