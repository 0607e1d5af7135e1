// Training-run simulator: runs a noise-scale scenario under each policy and reports the time to the
// target.
//
// The simulated job advances in windows of kDecisionIntervalSteps steps on its current
// configuration. In each window the real step time is the cost model's estimate on the scenario's
// real cluster with step-to-step jitter, the progress is steps x B x seq_len x E(B) at the true
// noise scale, and the squared gradient norms the job would measure (per micro-batch and for the
// whole batch) are drawn from their exact distribution for gradients G + noise with tr(Sigma) =
// B_noise |G|^2 spread over gradient_noise_dimension directions: |mean of n samples|^2 is
// (sigma^2 / n) times a noncentral chi-square. Policies see only those measurements.
//
//   fixed       the best static batch and plan for the whole trajectory, chosen before the run from
//               the cost model's step times and the known trajectory (what the planner would pick)
//   batch-only  the online controller, plan held at fixed's plan
//   plan-only   the online controller, batch held at fixed's batch
//   coadaptive  the online controller over every candidate
// Every policy starts on fixed's configuration, the one the job would be launched with; the online
// ones then adapt from what they measure.
// plus the offline optimum (offline_optimum.h), which knows the trajectory and the real step times.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "adapt/candidate_set.h"
#include "adapt/noise_scale_scenario.h"
#include "adapt/offline_optimum.h"
#include "adapt/policy_run.h"
#include "adapt/training_run_world.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"

namespace tessera {

// The controller observes and decides every this many steps (a typical logging interval).
inline constexpr std::int64_t kDecisionIntervalSteps = 100;
// A policy's simulation evaluates at most this many candidates in all (each window: every allowed
// candidate, plus kWindowOverheadEvaluations for the step, the norms and the refit: measured, a
// window's own work takes about 1.3 us, a candidate's goodput about 20 ns), so its work
// does not grow with the token budget: windows last kDecisionIntervalSteps, or longer where that
// many steps make less than budget / max_decision_windows(allowed) of progress. The built-in
// scenarios of llama3-8b and qwen2.5-32b on 32 GPUs stay within it (at most 64,000 windows of
// 100 steps, each making more than budget / 123,000), so their answers are the per-100-step ones.
inline constexpr std::int64_t kMaxPolicyEvaluations = std::int64_t{1} << 24;
inline constexpr std::int64_t kWindowOverheadEvaluations = 64;
std::int64_t max_decision_windows(std::size_t allowed_candidates);

enum class Policy { fixed, batch_only, plan_only, coadaptive };
inline constexpr std::array<Policy, 4> kPolicies = {Policy::fixed, Policy::batch_only, Policy::plan_only,
                                                    Policy::coadaptive};
const char* to_string(Policy policy);  // "fixed", "batch-only", "plan-only", "coadaptive"

struct RunSimulation {
  TrainingRunWorld world;
  std::size_t fixed_candidate = 0;           // fixed's choice (by predicted step times)
  std::size_t hindsight_static_candidate = 0;  // the best static choice by real step times
  double hindsight_static_time_s = 0;          // its time to the target
  std::array<PolicyRun, 4> policies;           // in kPolicies order
  PolicyRun offline_optimum;
  const PolicyRun& of(Policy p) const { return policies[static_cast<std::size_t>(p)]; }
};

// Runs one policy in a world (deterministic for a given scenario seed), deciding every
// decision_interval_steps steps or, where those make less progress, every budget / max_windows
// of progress (max_windows 0: max_decision_windows of the policy's allowed candidates), so a
// run has about max_windows windows at most. Throws Error unless decision_interval_steps >= 1
// and max_windows >= 0.
PolicyRun simulate_policy(const TrainingRunWorld& world, Policy policy, std::size_t fixed_candidate,
                          std::int64_t decision_interval_steps = kDecisionIntervalSteps, std::int64_t max_windows = 0);

RunSimulation simulate_training_run(const ModelSpec& model, const Cluster& cluster,
                                    const NoiseScaleScenario& scenario, const CandidateOptions& options = {});
// The same on a world already built (the planner calls are the expensive part).
RunSimulation simulate_training_run(TrainingRunWorld world);

}  // namespace tessera
