#include "adapt/gain_map.h"

#include <chrono>

#include "adapt/noise_scale_scenario.h"
#include "adapt/training_run_simulator.h"
#include "core/checks.h"
#include "core/error.h"
#include "hardware/cluster.h"
#include "model/parameter_count.h"

namespace tessera {

namespace {

void check_shape(const std::vector<ModelSpec>& models, const std::vector<std::int64_t>& gpu_counts) {
  if (models.empty()) throw Error("--models", "empty", "one or more model names, comma-separated");
  if (gpu_counts.empty()) throw Error("--gpus", "empty", "one or more GPU counts, comma-separated");
  if (models.size() * gpu_counts.size() > kMaxGainMapCells)
    throw Error("--gpus",
                std::to_string(models.size()) + " models x " + std::to_string(gpu_counts.size()) + " GPU counts",
                "at most " + std::to_string(kMaxGainMapCells) + " cells in all");
  for (std::int64_t gpus : gpu_counts) require_positive("--gpus", gpus, kMaxAdaptGpus);
}

GainMapCell simulate_cell(const ModelSpec& model, const GpuSpec& gpu, std::int64_t gpus, const std::string& scenario) {
  GainMapCell cell;
  cell.model = model.name;
  cell.parameters = count_parameters(model).total();
  cell.gpus = gpus;
  cell.scenario = scenario.empty() ? default_scenario_name(gpus) : scenario;
  const auto start = std::chrono::steady_clock::now();
  const Cluster cluster = make_cluster(gpu, gpus);
  const NoiseScaleScenario s = builtin_scenario(cell.scenario, model);
  try {
    const RunSimulation sim = simulate_training_run(model, cluster, s);
    cell.fits = true;
    cell.gain = gain_accounting(sim);
    cell.batch_changes = sim.of(Policy::coadaptive).batch_changes;
    cell.plan_changes = sim.of(Policy::coadaptive).plan_changes;
  } catch (const Error& e) {
    // build_candidates' "no plan fits at any batch": an answer for this cell, not bad input.
    if (e.field() != "cluster") throw;
  }
  cell.simulation_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return cell;
}

}  // namespace

std::vector<GainMapCell> gain_map(const std::vector<ModelSpec>& models, const GpuSpec& gpu,
                                  const std::vector<std::int64_t>& gpu_counts, const std::string& scenario) {
  check_shape(models, gpu_counts);
  std::vector<GainMapCell> cells;
  cells.reserve(models.size() * gpu_counts.size());
  for (const ModelSpec& model : models)
    for (std::int64_t gpus : gpu_counts) cells.push_back(simulate_cell(model, gpu, gpus, scenario));
  return cells;
}

}  // namespace tessera
