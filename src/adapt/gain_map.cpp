#include "adapt/gain_map.h"

#include <atomic>
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

GainMapCell simulate_cell(const ModelSpec& model, const GpuSpec& gpu, std::int64_t gpus, const std::string& scenario,
                          std::atomic<std::int64_t>& budget) {
  GainMapCell cell;
  cell.model = model.name;
  cell.parameters = count_parameters(model).total();
  cell.gpus = gpus;
  cell.scenario = scenario.empty() ? default_scenario_name(gpus) : scenario;
  const auto start = std::chrono::steady_clock::now();
  const Cluster cluster = make_cluster(gpu, gpus);
  const NoiseScaleScenario s = builtin_scenario(cell.scenario, model);
  CandidateOptions options;
  options.evaluation_budget = &budget;
  try {
    const RunSimulation sim = simulate_training_run(model, cluster, s, options);
    cell.fits = true;
    cell.gain = gain_accounting(sim);
    cell.batch_changes = sim.of(Policy::coadaptive).batch_changes;
    cell.plan_changes = sim.of(Policy::coadaptive).plan_changes;
    cell.plans_evaluated = sim.world.candidates.plans_evaluated;
  } catch (const Error& e) {
    // build_candidates' "no plan fits at any batch": an answer for this cell, not bad input.
    if (e.field() != "cluster") throw;
  }
  cell.simulation_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return cell;
}

Error over_budget(std::int64_t budget, std::size_t cells) {
  return Error("--models",
               std::to_string(cells) + (cells == 1 ? " cell costs" : " cells cost") + " more than " +
                   std::to_string(budget) + " plan evaluations, the most one map may cost (to answer within 10 s on 2 cores)",
               "fewer cells, or cells of fewer plans (smaller models, more GPUs); `adapt simulate` for one cell");
}

}  // namespace

std::vector<GainMapCell> gain_map(const std::vector<ModelSpec>& models, const GpuSpec& gpu,
                                  const std::vector<std::int64_t>& gpu_counts, const std::string& scenario,
                                  std::int64_t evaluation_budget) {
  check_shape(models, gpu_counts);
  std::atomic<std::int64_t> budget{evaluation_budget};
  std::vector<GainMapCell> cells;
  cells.reserve(models.size() * gpu_counts.size());
  try {
    for (const ModelSpec& model : models)
      for (std::int64_t gpus : gpu_counts) cells.push_back(simulate_cell(model, gpu, gpus, scenario, budget));
  } catch (const Error& e) {
    if (e.field() == kEvaluationBudgetField) throw over_budget(evaluation_budget, models.size() * gpu_counts.size());
    throw;
  }
  return cells;
}

}  // namespace tessera
