// Published critical-batch trajectories: how the critical batch (taken as the gradient noise scale
// B_noise, McCandlish et al. 2018, section 2.3) grows with the tokens trained, as noise-scale points
// for a NoiseScaleScenario.
//
//   kaplan    Kaplan et al. 2020: B_crit(L) with L(N, D) (sections 4 and 5.1); grows steeply at first,
//             then slowly (most of a run sits within 2x of its final value).
//   deepseek  DeepSeek LLM 2024 (arXiv 2401.02954, section 3.1, eq. 1): B_opt = 0.2920 C^0.3271
//             tokens for a compute budget C, evaluated at the compute spent so far, C = 6 N D.
//   llama3    Llama 3 405B's batch schedule (arXiv 2407.21783, section 3.4.1): 4M tokens, 8M after
//             252M of 15.6T tokens, 16M after 2.87T; at the same fractions of any budget (Zhang et al.
//             2024, arXiv 2410.21676: the critical batch scales with data, not with model size).
//   merrill   Merrill et al. 2025 (arXiv 2505.23971, abstract and section 4): measured on OLMo 1B and
//             7B, the critical batch is near 0 at initialisation, rises quickly, then plateaus. Here:
//             linear from 1/64 of the plateau to the plateau over the first 20% of the budget, then
//             flat; the plateau is deepseek's B_opt at the whole budget's compute. The 1/64 start and
//             the 20% knee are documented assumptions that reproduce that shape, not fitted values.
#pragma once

#include <string>
#include <vector>

#include "adapt/noise_scale_scenario.h"

namespace tessera {

enum class Trajectory { kaplan, deepseek, llama3, merrill };

std::vector<std::string> trajectory_names();  // "kaplan", "deepseek", "llama3", "merrill"
const char* to_string(Trajectory trajectory);
// Error("--trajectory", ...) listing the names for anything else.
Trajectory parse_trajectory(const std::string& name);
// One line naming the source of a trajectory, for scenario descriptions.
std::string trajectory_source(Trajectory trajectory);

// DeepSeek LLM's optimal batch in tokens for a compute budget in FLOPs (eq. 1 of section 3.1).
double deepseek_optimal_batch_tokens(double compute_flops);

// Merrill-shaped trajectory's knee (fraction of the budget) and start (fraction of the plateau).
inline constexpr double kMerrillKneeFraction = 0.2;
inline constexpr double kMerrillStartFraction = 1.0 / 64.0;

// B_noise over [0, budget_tokens] for a model with `non_embedding_params` (N) trained for
// `run_tokens` in all (the trajectory's own run: kaplan and deepseek depend only on the tokens so
// far, llama3 and merrill on their fraction of the whole run, merrill's plateau on the whole run's
// compute). Points strictly increasing in tokens, the first at 0; at most 70 of them.
std::vector<NoiseScalePoint> trajectory_points(Trajectory trajectory, double non_embedding_params, double run_tokens,
                                               double budget_tokens);

}  // namespace tessera
