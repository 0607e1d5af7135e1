// The gain of co-adapting batch and plan over the best fixed configuration, mapped over cluster
// sizes and models (`tessera adapt map`): one training-run simulation per cell, each on the
// scenario a user would get without --scenario (default_scenario_name of the cell's GPU count,
// sized to the model), so the map says where co-adaptation pays and where it is negligible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "adapt/gain_accounting.h"
#include "hardware/gpu_spec.h"
#include "model/model_spec.h"

namespace tessera {

// The built-in map: Llama 3 sizes from 8B to 405B, on one 32-GPU cluster (the small scenarios)
// and on 1,024 and 8,192 GPUs (the large-cluster ones), well within kMaxGainMapEvaluations.
inline constexpr const char* kDefaultGainMapModels[] = {"llama3-8b", "llama3-70b", "llama3.1-405b"};
inline constexpr std::int64_t kDefaultGainMapGpus[] = {32, 1024, 8192};
// Most GPUs a simulated cluster may have (`adapt map` and `adapt simulate --gpus`): 4x the largest
// published run (Llama 3 405B on 16,384 H100), so one simulation stays within seconds.
inline constexpr std::int64_t kMaxAdaptGpus = 65'536;
// Most cells a map may hold (each is one simulation: up to a few seconds at 8,192 GPUs).
inline constexpr std::size_t kMaxGainMapCells = 64;
// Most plans the planner may cost over a whole map (every cell searches every grid batch). A
// cell's cost is its searches' (0.05 s for llama3-8b on 32 GPUs, 8 s for mixtral-8x22b on 256),
// known only by running them, so the map is refused, naming --models, once it has spent this:
// ~7.5 s on 2 cores at the slowest rate measured, 0.34 million plans per second and core
// (deepseek-v3 on 256 H100: 5.27 million plans in 7.7 s on 2 cores; llama3.1-405b on 512: 0.45
// million; README, `make bench-limits`), so a refused map ends within 10 s. Deterministic: each
// search runs on one thread, so a map's count does not depend on timing.
inline constexpr std::int64_t kMaxGainMapEvaluations = 5'000'000;

struct GainMapCell {
  std::string model;
  double parameters = 0;  // total
  std::int64_t gpus = 0;
  std::string scenario;
  bool fits = false;               // false: no plan fits at any batch of the scenario (gain is zero)
  GainAccounting gain;             // coadaptive vs fixed (valid when fits)
  std::int64_t batch_changes = 0;  // coadaptive's
  std::int64_t plan_changes = 0;
  double simulation_s = 0;  // wall-clock time of the cell's simulation
  std::int64_t plans_evaluated = 0;  // by the planner, over the cell's grid batches
};

// scenario empty: each cell gets default_scenario_name(gpus). Throws Error("--models" / "--gpus",
// ...) for an empty list or more than kMaxGainMapCells cells, Error("--gpus", ...) for a count
// below 1, Error("--models", ...) when the cells together cost more than `evaluation_budget` plans.
std::vector<GainMapCell> gain_map(const std::vector<ModelSpec>& models, const GpuSpec& gpu,
                                  const std::vector<std::int64_t>& gpu_counts, const std::string& scenario = "",
                                  std::int64_t evaluation_budget = kMaxGainMapEvaluations);

}  // namespace tessera
