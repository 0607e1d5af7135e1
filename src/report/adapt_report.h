// A training-run simulation (adapt/training_run_simulator.h) as stable JSON and as the human table
// of `tessera adapt simulate`.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "adapt/gain_accounting.h"
#include "adapt/training_run_simulator.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"

namespace tessera {

nlohmann::json run_simulation_to_json(const RunSimulation& run, const ModelSpec& model, const Cluster& cluster);
// One plain-language line: what co-adapting saves and where the batch and plan change, or that it
// gains nothing worth a restart (adapt/gain_accounting.h).
std::string run_conclusion(const RunSimulation& run);
// {"total_s", "total_pct", "from_batch_s", "from_batch_pct", "from_plan_s", "from_plan_pct",
//  "offline_optimum_s", "offline_optimum_pct", "worthwhile"}: percentages of fixed's time.
nlohmann::json gain_to_json(const GainAccounting& gain);
std::string run_simulation_to_table(const RunSimulation& run, const ModelSpec& model, const Cluster& cluster);

}  // namespace tessera
