// Whether a plan fits: GPU memory (Estimate::peak_memory_bytes against usable_memory_bytes), and
// the node's host memory and NVMe for the state it offloads (plan/memory_tiers.h).
#pragma once

#include "cost/estimate.h"
#include "hardware/cluster.h"

namespace tessera {

// Sets the per-node offload figures and fits_gpu / fits of `e` (peak and usable memory already
// set). A node's GPUs hold consecutive ranks (tp innermost), so they share a stage's offloaded
// state: per node = per GPU x the GPUs of the cluster on one node. Nothing of the host memory is
// held back for the OS or data loaders: the estimate prints the margin.
void set_memory_verdict(Estimate& e, const Cluster& cluster, double host_bytes_per_gpu, double nvme_bytes_per_gpu);

// Whether the state a plan offloads fits the node's host memory and NVMe (figures set above).
bool offloaded_state_fits(const Estimate& e);

}  // namespace tessera
