// Load-balance figures of a balanced stream, averaged over its steps: for the cost it was
// balanced on, for any other per-sample cost (one module's share, e.g. the encoder), and for a
// random assignment of the same samples in each step (the baseline a plain shuffled sampler gives).
#pragma once

#include <cstdint>
#include <span>

#include "balance/load_balance.h"
#include "balance/stream_balancer.h"

namespace tessera {

// Mean over steps with any load of each step's LoadBalance under `cost` (per input sample).
LoadBalance mean_load_balance(const StreamResult& result, std::span<const double> cost, int slots);

// The same for a seeded random equal-count assignment of each step's placed samples.
LoadBalance mean_random_load_balance(const StreamResult& result, std::span<const double> cost, int slots,
                                     std::uint64_t seed);

}  // namespace tessera
