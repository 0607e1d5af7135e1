#include "reliability/restart_time.h"

#include <cmath>

#include "core/checks.h"

namespace tessera {

namespace {
constexpr double kMaxRestartS = 30.0 * 86400.0;  // a month: beyond it, a unit slip
constexpr double kMaxRepairH = 365.0 * 24.0;     // a year
constexpr std::int64_t kMaxSpareNodes = 1'000'000;
}  // namespace

void RestartSpec::validate() const {
  require_non_negative_real("restart.detection_s", detection_s, kMaxRestartS);
  require_non_negative_real("restart.relaunch_s", relaunch_s, kMaxRestartS);
  require_non_negative_real("restart.replacement_wait_s", replacement_wait_s, kMaxRestartS);
  require_positive_real("restart.node_repair_h", node_repair_h, kMaxRepairH);
  require_non_negative("restart.spare_nodes", spare_nodes, kMaxSpareNodes);
}

double no_spare_probability(double mean, std::int64_t spares) {
  require_non_negative_real("mean_nodes_in_repair", mean, 1e12);
  require_non_negative("spares", spares, kMaxSpareNodes);
  // 1 - sum_{k < S} e^{-mean} mean^k / k!, the terms built by recurrence.
  double term = std::exp(-mean), below = 0;
  for (std::int64_t k = 0; k < spares; ++k) {
    below += term;
    term *= mean / static_cast<double>(k + 1);
  }
  return std::max(0.0, 1.0 - below);
}

double expected_restart_s(const RestartSpec& r, double failures_per_hour, double node_losses_per_hour) {
  r.validate();
  require_positive_real("failures_per_hour", failures_per_hour, 1e12);
  require_non_negative_real("node_losses_per_hour", node_losses_per_hour, failures_per_hour);
  const double node_losing_share = node_losses_per_hour / failures_per_hour;
  const double waits = node_losing_share * no_spare_probability(node_losses_per_hour * r.node_repair_h, r.spare_nodes);
  return r.detection_s + r.relaunch_s + waits * r.replacement_wait_s;
}

}  // namespace tessera
