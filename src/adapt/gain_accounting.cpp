#include "adapt/gain_accounting.h"

namespace tessera {

GainAccounting gain_accounting(const RunSimulation& sim) {
  GainAccounting g;
  g.fixed_s = sim.of(Policy::fixed).time_to_target_s;
  const double batch_only = sim.of(Policy::batch_only).time_to_target_s;
  const double coadaptive = sim.of(Policy::coadaptive).time_to_target_s;
  g.total_s = g.fixed_s - coadaptive;
  g.from_batch_s = g.fixed_s - batch_only;
  g.from_plan_s = batch_only - coadaptive;
  g.optimum_s = g.fixed_s - sim.offline_optimum.time_to_target_s;
  return g;
}

std::vector<RunChange> run_changes(const PolicyRun& run) {
  std::vector<RunChange> changes;
  for (std::size_t i = 1; i < run.segments.size(); ++i)
    changes.push_back(RunChange{run.segments[i].start_tokens, run.segments[i - 1].candidate, run.segments[i].candidate});
  return changes;
}

}  // namespace tessera
