#include "adapt/sharded_squared_norm.h"

#include <cmath>
#include <string>

#include "core/error.h"

namespace tessera {

void SquaredNormShare::add(double squared_norm, std::int64_t replicas) {
  if (!std::isfinite(squared_norm) || squared_norm < 0.0)
    throw Error("squared_norm", "got " + std::to_string(squared_norm), "a finite number >= 0");
  if (replicas < 1) throw Error("replicas", "got " + std::to_string(replicas), "an integer >= 1");
  sum_ += squared_norm / static_cast<double>(replicas);
}

double model_squared_norm(std::span<const double> rank_shares) {
  double total = 0;
  for (double share : rank_shares) total += share;
  return total;
}

}  // namespace tessera
