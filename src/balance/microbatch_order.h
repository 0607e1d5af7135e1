// The order a pipeline runs one step's micro-batches in under 1F1B (PipeDream-flush, Narayanan et
// al. 2021). With uneven micro-batches the order changes the bubble: a slow micro-batch early
// delays every stage's warm-up, a slow one late lengthens the drain. Heuristic: the smallest
// first (the pipeline fills fast), the next p - 1 smallest at the end in decreasing order (the
// drain is short), and in between each micro-batch chosen to best fit the one p - 1 places
// earlier, whose backward it runs beside on the first stage (their sum near the mean pair sum).
// The heuristic, increasing, decreasing and the given order are each simulated
// (schedule/pipeline_simulator.h) and the fastest wins, so the result is never slower than the
// given order.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "schedule/pipeline_simulator.h"

namespace tessera {

// Backward = 2 x forward for every stage (input-gradient and weight-gradient GEMMs; Narayanan et
// al., SC'21, eq. 3).
inline constexpr double kPipelineBackwardOverForward = 2.0;

struct MicrobatchOrder {
  std::vector<std::int32_t> order;  // order[k] = the micro-batch that runs k-th
  double makespan_s = 0;            // simulated, in that order
  double given_makespan_s = 0;      // simulated, in the given order
};

// `time_s[j]`: forward + backward time of micro-batch j through the whole model, split evenly
// over `stages` stages. Throws Error("stages" / "microbatches", ...) for a shape the simulator
// refuses.
MicrobatchOrder order_microbatches(std::span<const double> time_s, int stages, PipelineSimulator& simulator);

// The simulated 1F1B makespan of running the micro-batches in `order`.
double pipeline_makespan_s(std::span<const double> time_s, std::span<const std::int32_t> order, int stages,
                           PipelineSimulator& simulator);

}  // namespace tessera
