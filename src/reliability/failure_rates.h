// How often a training job is interrupted: failures per GPU-hour (the GPU itself: its die, HBM,
// SRAM, system processor, thermals) and per node-hour (everything else a node brings: host,
// NICs, switches and cables, software), plus planned interruptions per node-hour (firmware and
// configuration changes). A synchronous job stops when any of its parts does, so its failure rate
// is the sum over its GPUs and nodes, and its MTBF the reciprocal.
//
// Defaults: Llama 3 405B on 16,384 H100 in 2,048 nodes of 8 (arXiv 2407.21783, section 3.3.4 and
// Table 5): 466 interruptions in a 54-day snapshot, 47 planned and 419 unexpected; the GPU rows of
// Table 5 (faulty GPU, HBM3, SRAM, GPU system processor, silent data corruption, thermal interface
// + sensor) are 58.7% of the unexpected ones. So, over 54 x 24 = 1,296 hours:
//   per GPU-hour  = 0.587 x 419 / (1,296 h x 16,384 GPUs) = 1.158e-5   (GPU MTBF ~ 86,000 h)
//   per node-hour = 0.413 x 419 / (1,296 h x  2,048 nodes) = 6.52e-5   (node MTBF ~ 15,000 h)
//   planned per node-hour = 47 / (1,296 h x 2,048 nodes)    = 1.77e-5
// The derivation is a function (rates_from_fleet_report) so the test reproduces it.
#pragma once

#include <cstdint>

namespace tessera {

struct FailureRates {
  double per_gpu_hour = 0;          // unexpected failures attributed to a GPU
  double per_node_hour = 0;         // unexpected failures of the rest of a node (host, network, software)
  double planned_per_node_hour = 0; // planned interruptions (a checkpoint is taken first; no work lost)
  void validate() const;            // Error("failures.<field>", ...): finite, >= 0, not all failures 0
};

// A fleet report: `unexpected` and `planned` interruptions of one job over `hours`, on `gpus` GPUs
// in `nodes` nodes, of which `gpu_share` were attributed to GPUs.
struct FleetReport {
  double unexpected = 0;
  double planned = 0;
  double hours = 0;
  std::int64_t gpus = 0;
  std::int64_t nodes = 0;
  double gpu_share = 0;
};
FailureRates rates_from_fleet_report(const FleetReport& report);

// The Llama 3 report above (its figures as named constants in failure_rates.cpp).
FleetReport llama3_fleet_report();
FailureRates default_failure_rates();  // rates_from_fleet_report(llama3_fleet_report())

// Unexpected failures per hour of a job on `gpus` GPUs in nodes of `gpus_per_node` (a partial
// node counts as one), and its mean time between them in seconds.
double job_failures_per_hour(const FailureRates& rates, std::int64_t gpus, std::int64_t gpus_per_node);
double job_mtbf_s(const FailureRates& rates, std::int64_t gpus, std::int64_t gpus_per_node);
// Planned interruptions per hour of that job.
double job_planned_per_hour(const FailureRates& rates, std::int64_t gpus, std::int64_t gpus_per_node);
// Of the unexpected failures per hour, those that take a node out until it is replaced (the GPU
// ones: a faulty GPU is drained with its node).
double job_node_losses_per_hour(const FailureRates& rates, std::int64_t gpus);

// The job's nodes: ceil(gpus / gpus_per_node).
std::int64_t job_nodes(std::int64_t gpus, std::int64_t gpus_per_node);

}  // namespace tessera
