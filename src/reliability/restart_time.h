// The time from an unexpected failure until training runs again, checkpoint load excluded:
// noticing the failure, relaunching the job, and (when the failure took a node out and no spare
// node is left) waiting for a replacement node.
//   - detection: a rank that dies mid-collective leaves the others blocked until PyTorch's NCCL
//     watchdog fires; its default timeout is 10 minutes (pytorch/pytorch PR #110947, "Change
//     ProcessGroupNCCL default timeout to 10 min"). Crash faults that the launcher sees at once
//     cost less: 600 s is the default's upper bound, settable.
//   - relaunch: rendezvous, process start, communicator setup, data-loader start and warm-up
//     steps; 300 s, the value adapt/reconfiguration_cost.h takes from TrainMover (Lao et al.,
//     arXiv 2412.12636: ~20 s with standby machines, checkpoint-restart baselines far slower).
//   - replacement: with S spare nodes, nodes taken out by failures are repaired in
//     node_repair_h; the nodes in repair are Poisson with mean (node losses per hour x repair
//     hours) (an M/G/inf queue), and a failure waits replacement_wait_s only when all S spares
//     are already in use: P(N >= S).
#pragma once

#include <cstdint>

namespace tessera {

inline constexpr double kDefaultDetectionS = 600.0;
inline constexpr double kDefaultRelaunchS = 300.0;
// No replacement wait by default: the scheduler swaps in a node from outside the job (as in the
// Llama 3 production cluster, whose figure this default reproduces).
inline constexpr double kDefaultReplacementWaitS = 0.0;
// An assumption: a day to drain, diagnose, repair or swap and return a node.
inline constexpr double kDefaultNodeRepairH = 24.0;

struct RestartSpec {
  double detection_s = kDefaultDetectionS;
  double relaunch_s = kDefaultRelaunchS;
  double replacement_wait_s = kDefaultReplacementWaitS;
  double node_repair_h = kDefaultNodeRepairH;
  std::int64_t spare_nodes = 0;
  void validate() const;  // Error("restart.<field>", ...)
};

// P(N >= spares) for N ~ Poisson(mean): the chance that a node-losing failure finds no spare.
double no_spare_probability(double mean_nodes_in_repair, std::int64_t spares);

// Expected restart time of an unexpected failure, load excluded: detection + relaunch +
// (node-losing share of failures) x P(no spare) x replacement wait.
double expected_restart_s(const RestartSpec& restart, double failures_per_hour, double node_losses_per_hour);

}  // namespace tessera
