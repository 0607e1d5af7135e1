// The gain of co-adapting batch and plan over the best fixed configuration, mapped over cluster
// sizes and models (`tessera adapt map`): one training-run simulation per cell, each on the
// scenario a user would get without --scenario (default_scenario_name of the cell's GPU count,
// sized to the model), so the map says where co-adaptation pays and where it is negligible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "adapt/gain_accounting.h"
#include "hardware/gpu_spec.h"
#include "model/model_spec.h"

namespace tessera {

// The built-in map: Llama 3 sizes from 8B to 405B, on one 32-GPU cluster (the small scenarios)
// and on 512 to 8,192 GPUs (the large-cluster ones).
inline constexpr const char* kDefaultGainMapModels[] = {"llama3-8b", "llama3-70b", "llama3.1-405b"};
inline constexpr std::int64_t kDefaultGainMapGpus[] = {32, 512, 1024, 2048, 4096, 8192};
// Most GPUs a simulated cluster may have (`adapt map` and `adapt simulate --gpus`): 4x the largest
// published run (Llama 3 405B on 16,384 H100), so one simulation stays within seconds.
inline constexpr std::int64_t kMaxAdaptGpus = 65'536;
// Most cells a map may hold (each is one simulation: up to a few seconds at 8,192 GPUs).
inline constexpr std::size_t kMaxGainMapCells = 64;

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
};

// scenario empty: each cell gets default_scenario_name(gpus). Throws Error("--models" / "--gpus",
// ...) for an empty list or more than kMaxGainMapCells cells, Error("--gpus", ...) for a count
// below 1.
std::vector<GainMapCell> gain_map(const std::vector<ModelSpec>& models, const GpuSpec& gpu,
                                  const std::vector<std::int64_t>& gpu_counts, const std::string& scenario = "");

}  // namespace tessera
