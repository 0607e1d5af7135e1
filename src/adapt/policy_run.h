// What one policy did over a simulated training run: its time to the target and the sequence of
// configurations it ran.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "adapt/batch_schedule.h"
#include "adapt/candidate_set.h"

namespace tessera {

struct RunSegment {
  double start_tokens = 0;  // consumed tokens when this configuration took effect
  std::size_t candidate = 0;
};

struct PolicyRun {
  double time_to_target_s = 0;  // including reconfiguration time
  double consumed_tokens = 0;
  double steps = 0;
  // A switch can change both: batch_changes counts the switches that changed the global batch (the
  // batch schedule's entries after the first), plan_changes those that changed the plan (restarts).
  std::int64_t batch_changes = 0;
  std::int64_t plan_changes = 0;
  double reconfiguration_s = 0;
  std::int64_t windows = 0;       // simulated stretches of steps (decision windows; optimum: segments)
  std::int64_t long_windows = 0;  // of them, longer than the decision interval (bounded work)
  std::vector<RunSegment> segments;
};

// The run's batch sizes by consumed tokens (for megatron_batch_schedule).
std::vector<BatchScheduleEntry> batch_schedule(const PolicyRun& run, const CandidateSet& candidates);

}  // namespace tessera
