#include "reliability/checkpoint_interval.h"

#include <cmath>

#include "core/checks.h"

namespace tessera {

namespace {
// A century: any MTBF, checkpoint or restart time above it is a unit slip.
constexpr double kMaxSeconds = 100.0 * 365.0 * 86400.0;
constexpr int kBisectionSteps = 200;
constexpr double kRelativeTolerance = 1e-12;

void check_times(double checkpoint_s, double mtbf_s) {
  require_non_negative_real("checkpoint_s", checkpoint_s, kMaxSeconds);
  require_positive_real("mtbf_s", mtbf_s, kMaxSeconds);
}
}  // namespace

double young_interval_s(double checkpoint_s, double mtbf_s) {
  check_times(checkpoint_s, mtbf_s);
  return std::sqrt(2.0 * checkpoint_s * mtbf_s);
}

double daly_interval_s(double checkpoint_s, double mtbf_s) {
  check_times(checkpoint_s, mtbf_s);
  if (checkpoint_s >= 2.0 * mtbf_s) return mtbf_s;
  const double ratio = checkpoint_s / (2.0 * mtbf_s);
  return std::sqrt(2.0 * checkpoint_s * mtbf_s) * (1.0 + std::sqrt(ratio) / 3.0 + ratio / 9.0) - checkpoint_s;
}

double optimal_interval_s(double checkpoint_s, double mtbf_s) {
  check_times(checkpoint_s, mtbf_s);
  if (checkpoint_s == 0) return 0;  // free checkpoints: checkpoint continuously
  // g(tau) = e^{(tau+delta)/M} (1 - tau/M) - 1: g(0) > 0, g(M) = -1, decreasing on [0, M].
  // expm1 keeps the root accurate when delta << M.
  const auto g = [&](double tau) {
    const double x = (tau + checkpoint_s) / mtbf_s;
    return std::expm1(x) * (1.0 - tau / mtbf_s) - tau / mtbf_s;
  };
  double low = 0, high = mtbf_s;
  for (int i = 0; i < kBisectionSteps && high - low > kRelativeTolerance * high; ++i) {
    const double mid = 0.5 * (low + high);
    (g(mid) > 0 ? low : high) = mid;
  }
  return 0.5 * (low + high);
}

double useful_fraction(double interval_s, double checkpoint_s, double restart_s, double mtbf_s) {
  check_times(checkpoint_s, mtbf_s);
  require_positive_real("interval_s", interval_s, kMaxSeconds);
  require_non_negative_real("restart_s", restart_s, kMaxSeconds);
  const double wall_per_work =
      (mtbf_s / interval_s) * std::exp(restart_s / mtbf_s) * std::expm1((interval_s + checkpoint_s) / mtbf_s);
  return 1.0 / wall_per_work;
}

}  // namespace tessera
