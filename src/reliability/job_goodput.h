// A plan's expected useful fraction of wall-clock under failures: the job's MTBF from its GPUs
// and nodes (failure_rates.h), its checkpoint cost (checkpoint_cost.h), its restart time
// (restart_time.h + the checkpoint load), and the checkpoint interval that maximises Daly's
// useful fraction (checkpoint_interval.h), rounded to whole steps (Megatron's --save-interval
// counts iterations): the better of the two neighbouring step counts.
//   - Asynchronous save: training stalls only for the device-to-host copy (delta = blocking_s);
//     a save is durable write_s after it starts, so the interval is at least that long, and a
//     failure in that window falls back one more checkpoint: the window's length is added to the
//     restart time (first order: the lost interval times the window's share of it).
//   - Planned interruptions (a checkpoint is taken first, no detection): each costs one
//     checkpoint, the relaunch and the load; at rate p per hour they take p (relaunch + load +
//     delta) of the wall-clock: fraction = unexpected fraction x (1 - that share).
#pragma once

#include <cstdint>

#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"
#include "reliability/checkpoint_cost.h"
#include "reliability/failure_rates.h"
#include "reliability/restart_time.h"
#include "reliability/storage_spec.h"

namespace tessera {

struct FailureModel {
  FailureRates rates = default_failure_rates();
  StorageSpec storage;
  CheckpointSave save;
  RestartSpec restart;
  void validate() const;
};

struct FailureOutcome {
  double mtbf_s = 0;                 // unexpected failures
  double failures_per_hour = 0;
  double planned_per_hour = 0;
  CheckpointCost checkpoint;
  double restart_s = 0;              // expected, with the load (and the async window)
  double young_interval_s = 0;
  double daly_interval_s = 0;
  double optimal_interval_s = 0;     // exact, before rounding to steps
  std::int64_t interval_steps = 0;   // --save-interval
  double interval_s = 0;             // interval_steps x step time
  double useful_fraction = 0;        // of wall-clock, planned interruptions included
};

// Raw inputs: a job of `gpus` in nodes of `gpus_per_node`, a checkpoint of `checkpoint`, steps
// of `step_time_s`.
FailureOutcome failure_outcome(const FailureModel& model, const CheckpointCost& checkpoint, std::int64_t gpus,
                               std::int64_t gpus_per_node, double step_time_s);
// A plan on a cluster (its checkpoint from checkpoint_cost).
FailureOutcome plan_failure_outcome(const FailureModel& model, const ModelSpec& spec, const Plan& plan,
                                    const Cluster& cluster, double step_time_s);

}  // namespace tessera
