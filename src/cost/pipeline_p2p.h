// Pipeline send/recv: each micro-batch's activation (split over tp by sequence parallelism or
// Megatron's scatter/gather optimisation, SC'21 §4.1) crosses each stage boundary both ways.
// Stage s holds ranks [s stride, (s+1) stride); its boundary to s+1 crosses a node when those
// blocks sit in different nodes (NVLink inside a node, the NIC across).
#pragma once

#include <cstdint>

#include "hardware/cluster.h"
#include "plan/plan.h"

namespace tessera {

struct PipelineP2p {
  double intra_s = 0, inter_s = 0, mean_s = 0;  // one activation over a boundary
  double exposed_s = 0;  // fill and drain, plus blocking transfers in the steady state
  std::int64_t stages_per_node = 1;
  double boundary_s(std::int64_t s) const {
    const bool crosses = stages_per_node == 1 || (s + 1) % stages_per_node == 0;
    return crosses ? inter_s : intra_s;
  }
};

// tokens: a micro-batch's tokens on one rank (its share of the sequence under cp); tp: the
// tensor-parallel degree the activation is split over with sequence parallelism.
PipelineP2p pipeline_p2p(const Plan& p, const Cluster& c, double tokens, double tp, std::int64_t hidden,
                         std::int64_t microbatches);

}  // namespace tessera
