// A training-run simulation (adapt/training_run_simulator.h) as stable JSON and as the human table
// of `tessera adapt simulate`.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "adapt/training_run_simulator.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"

namespace tessera {

nlohmann::json run_simulation_to_json(const RunSimulation& run, const ModelSpec& model, const Cluster& cluster);
// One plain-language line: what co-adapting saves and where the batch and plan change, or that it
// gains nothing worth a restart (adapt/gain_accounting.h).
std::string run_conclusion(const RunSimulation& run);
std::string run_simulation_to_table(const RunSimulation& run, const ModelSpec& model, const Cluster& cluster);

}  // namespace tessera
