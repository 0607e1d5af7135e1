// How unevenly routed tokens land on expert-parallel ranks: the busiest rank's share over the
// mean, which sets the critical path of the grouped GEMMs and the all-to-all (every rank waits
// for the slowest) and the size of the dispatch buffers.
#pragma once

#include "plan/plan.h"

namespace tessera {

// Dropless routing trained with an auxiliary balance loss (Megatron's default,
// --moe-router-load-balancing-type aux_loss) is balanced on average but not per step: the
// busiest expert-parallel rank receives more than the mean. Wang et al. 2024 ("Auxiliary-Loss-
// Free Load Balancing", arXiv 2408.15664, §4) measure batch-level maximal violations of tens of
// percent per expert under an aux loss; a rank holds experts / ep experts, which averages some of
// that out. 1.2 is an assumption in that range, not a fit; benchmark runs force-balance
// routing (--moe-router-force-load-balancing) and run at 1.
inline constexpr double kAuxLossMaxLoadFactor = 1.2;

// Load of the busiest rank over the mean: with a capacity factor and padding every expert runs
// exactly capacity_factor x the mean (tokens beyond it are dropped); forced balance gives 1;
// otherwise the aux-loss factor above.
constexpr double expert_load_factor(const Plan& plan) {
  if (plan.capacity_factor > 0) return plan.capacity_factor;
  return plan.force_balance ? 1.0 : kAuxLossMaxLoadFactor;
}

}  // namespace tessera
