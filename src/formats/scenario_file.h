// Run-simulator scenarios (adapt/noise_scale_scenario.h) as JSON, for
// `tessera adapt simulate --scenario NAME|FILE`:
// {"name": "my-run", "description": "...", "seq_len": 4096, "token_budget": 1.6e11,
//  "reference_batch": 128, "min_batch": 16, "max_batch": 4096,
//  "noise_scale": [{"tokens": 0, "noise_scale_tokens": 3.0e4}, {"tokens": 1.6e11, "noise_scale_tokens": 6.7e6}],
//  "network_bandwidth_scale": 1, "step_time_scale": {"zero3": 1.18}, "step_time_jitter": 0.02,
//  "gradient_noise_dimension": 1000, "seed": 1}
// Required: seq_len, token_budget, noise_scale. reference_batch, min_batch and max_batch default to
// default_batch_bounds(seq_len); the rest to the built-ins' values. Unknown keys are rejected.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "adapt/noise_scale_scenario.h"
#include "model/model_spec.h"

namespace tessera {

NoiseScaleScenario scenario_from_json(const nlohmann::json& j, const std::string& path);
nlohmann::json scenario_to_json(const NoiseScaleScenario& scenario);
// A built-in scenario's name (sized to the model, at seq_len tokens per sequence; 0: its default) or
// a path to a scenario JSON file (seq_len must be 0: Error("--seq", ...)); anything else is
// Error("--scenario", ...) listing the built-in names.
NoiseScaleScenario load_scenario(const std::string& name_or_path, const ModelSpec& model, std::int64_t seq_len = 0);

}  // namespace tessera
