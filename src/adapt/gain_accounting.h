// Where coadaptive's gain over fixed comes from, and whether it is worth a restart.
//
// Definitions (times to the target, s): total = fixed - coadaptive; from_batch = fixed - batch-only,
// what adapting the batch alone (plan held, no restart) gains; from_plan = total - from_batch =
// batch-only - coadaptive, what changing the plan as well adds (it includes the batches only a new
// plan can run well). The two parts sum to the total by construction; either may be negative
// (a policy can lose to fixed while it learns).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "adapt/training_run_simulator.h"

namespace tessera {

// Below this fraction of fixed's time a gain is reported as not worth a restart: about the
// step-to-step spread of a real run (~1-2%, vTrain, Bang et al. MICRO'24, section 6.1), so a
// smaller gain cannot be told apart from noise in a real job's measurements.
inline constexpr double kWorthwhileGainFraction = 0.01;

struct GainAccounting {
  double fixed_s = 0;
  double total_s = 0;       // fixed - coadaptive
  double from_batch_s = 0;  // fixed - batch-only
  double from_plan_s = 0;   // batch-only - coadaptive
  double optimum_s = 0;     // fixed - offline optimum: what any policy could gain
  double total_fraction() const { return total_s / fixed_s; }
  double from_batch_fraction() const { return from_batch_s / fixed_s; }
  double from_plan_fraction() const { return from_plan_s / fixed_s; }
  double optimum_fraction() const { return optimum_s / fixed_s; }
  bool worthwhile() const { return total_fraction() >= kWorthwhileGainFraction; }
};

GainAccounting gain_accounting(const RunSimulation& sim);

// The changes a run made, in order: consumed tokens where each took effect and the candidates
// before and after (for "the plan changes at ... from ... to ...").
struct RunChange {
  double consumed_tokens = 0;
  std::size_t from = 0;
  std::size_t to = 0;
};
std::vector<RunChange> run_changes(const PolicyRun& run);

}  // namespace tessera
