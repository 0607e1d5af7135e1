// What is reachable knowing the whole run in advance (the noise-scale trajectory and the real
// cluster's step times): the best single configuration, and the offline optimum, a shortest path
// over progress segments x candidates where staying costs nothing, a batch-only change
// batch_change_s and a plan change plan_change_s (dynamic programming, O(segments x candidates)
// since a switch's cost depends only on whether the plan changes). It bounds every policy, up to
// switches landing between segment boundaries (segments are <= 0.2% of the run).
#pragma once

#include <cstddef>

#include "adapt/policy_run.h"
#include "adapt/training_run_world.h"

namespace tessera {

enum class StepTimes { predicted, real };

// Time to the target running candidate c throughout (no jitter).
double static_time_to_target_s(const TrainingRunWorld& world, std::size_t candidate, StepTimes times);
// The candidate with the least static time to the target, by predicted or real step times.
std::size_t best_static_candidate(const TrainingRunWorld& world, StepTimes times);

PolicyRun offline_optimum(const TrainingRunWorld& world);

}  // namespace tessera
