#include "adapt/training_run_simulator.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>

#include "adapt/goodput_controller.h"
#include "adapt/simulated_gradient_norms.h"
#include "adapt/statistical_efficiency.h"
#include "core/checks.h"
#include "core/error.h"

namespace tessera {

namespace {

// |G|^2 of the simulated gradients; only the ratio tr(Sigma) / |G|^2 = B_noise matters.
constexpr double kGradientSqNorm = 1.0;

std::vector<std::size_t> allowed_candidates(const TrainingRunWorld& world, Policy policy, std::size_t fixed) {
  const auto& all = world.candidates.candidates;
  std::vector<std::size_t> allowed;
  for (std::size_t c = 0; c < all.size(); ++c) {
    const bool ok = policy == Policy::coadaptive ||
                    (policy == Policy::batch_only && all[c].plan_index == all[fixed].plan_index) ||
                    (policy == Policy::plan_only && all[c].global_batch == all[fixed].global_batch) ||
                    (policy == Policy::fixed && c == fixed);
    if (ok) allowed.push_back(c);
  }
  return allowed;
}

}  // namespace

const char* to_string(Policy policy) {
  switch (policy) {
    case Policy::fixed: return "fixed";
    case Policy::batch_only: return "batch-only";
    case Policy::plan_only: return "plan-only";
    case Policy::coadaptive: return "coadaptive";
  }
  return "?";
}

std::int64_t max_decision_windows(std::size_t allowed_candidates) {
  return kMaxPolicyEvaluations / (static_cast<std::int64_t>(allowed_candidates) + kWindowOverheadEvaluations);
}

PolicyRun simulate_policy(const TrainingRunWorld& world, Policy policy, std::size_t fixed_candidate,
                          std::int64_t decision_interval_steps, std::int64_t max_windows) {
  require_positive("decision_interval_steps", decision_interval_steps);
  require_non_negative("max_windows", max_windows, std::numeric_limits<std::int64_t>::max());
  const NoiseScaleScenario& s = world.scenario;
  const CandidateSet& set = world.candidates;
  const double seq = static_cast<double>(s.seq_len);
  const double b0 = static_cast<double>(s.reference_batch);
  std::mt19937_64 rng(s.seed * kPolicies.size() + static_cast<std::uint64_t>(policy));
  std::normal_distribution<double> jitter(0.0, 1.0);

  std::optional<GoodputController> controller;
  std::size_t current = fixed_candidate;
  if (policy != Policy::fixed) {
    ControllerOptions options;
    options.token_budget = s.token_budget;
    options.reference_batch = b0;
    controller.emplace(set, world.cost, options, allowed_candidates(world, policy, fixed_candidate));
    controller->switch_to(fixed_candidate);  // every policy starts as the job would be launched
  }
  if (max_windows == 0) max_windows = max_decision_windows(controller ? controller->allowed().size() : 1);
  // Progress a window makes at least, unless it is the last.
  const double window_progress = s.token_budget / static_cast<double>(max_windows);
  PolicyRun run;
  run.segments.push_back(RunSegment{0.0, current});
  double progress = 0;
  while (progress < s.token_budget) {
    const Candidate& c = set.candidates[current];
    const double batch = static_cast<double>(c.global_batch);
    const double step_tokens = batch * seq;
    // The window's length from the progress per step at its start.
    const double at_start = step_tokens * statistical_efficiency(batch, s.noise_scale_at(progress), b0);
    // A step makes at least min(B, B0) x seq_len >= 1 token of progress, so these fit an int64.
    const std::int64_t window =
        std::max(decision_interval_steps, static_cast<std::int64_t>(std::ceil(window_progress / at_start)));
    if (window > decision_interval_steps) run.long_windows += 1;
    // Progress over the window, exactly on the world's J (training_run_world.h); the last window
    // runs the fraction of a step that reaches the target, as the optimum counts it.
    const double steps_to_target = world.tokens_between(progress, s.token_budget, current) / step_tokens;
    const double n = std::min(static_cast<double>(window), steps_to_target);
    const std::int64_t steps = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(n)));
    const double next = n >= steps_to_target ? s.token_budget : world.progress_after(progress, n * step_tokens, current);
    const double noise_scale = s.noise_scale_at(0.5 * (progress + next));
    // What the job measures: the window's mean step time with log-normal jitter of relative spread
    // jitter / sqrt(steps), mean 1 (never negative whatever the scenario's jitter). The time it
    // takes is counted at the real step time: the jitter is measurement noise of mean 1, and
    // counting its draws would put a policy a random ~0.01% off the optimum's exact accounting.
    const double spread = s.step_time_jitter / std::sqrt(static_cast<double>(steps));
    const double step_time_s = world.true_step_time_s[current] * std::exp(spread * jitter(rng) - 0.5 * spread * spread);
    run.time_to_target_s += n * world.true_step_time_s[current];
    run.steps += n;
    run.windows += 1;
    run.consumed_tokens += n * step_tokens;
    progress = next;
    if (!controller || progress >= s.token_budget) continue;
    // Norms first, so the controller counts these steps' progress at the noise scale they measured.
    const std::int64_t micro_batch = set.plan(c).micro_batch;
    if (c.global_batch > micro_batch) {
      const MeasuredSquaredNorms norms = sample_squared_norms(rng, kGradientSqNorm, noise_scale * kGradientSqNorm,
                                                              s.gradient_noise_dimension, micro_batch, c.global_batch,
                                                              steps);
      controller->observe_gradients(norms.small_sq_norm, static_cast<double>(micro_batch), norms.big_sq_norm, batch,
                                    steps);
    }
    controller->observe_step(step_time_s, steps);
    const ControllerDecision d = controller->decide();
    if (!d.switch_now) continue;
    // A switch may change the batch, the plan or both: each is counted where it shows (the batch
    // schedule, the restarts).
    if (set.candidates[d.candidate].global_batch != c.global_batch) run.batch_changes += 1;
    if (set.candidates[d.candidate].plan_index != c.plan_index) run.plan_changes += 1;
    run.reconfiguration_s += d.switch_cost_s;
    run.time_to_target_s += d.switch_cost_s;
    controller->switch_to(d.candidate);
    current = d.candidate;
    run.segments.push_back(RunSegment{run.consumed_tokens, current});
  }
  return run;
}

RunSimulation simulate_training_run(TrainingRunWorld world) {
  RunSimulation r;
  r.world = std::move(world);
  r.fixed_candidate = best_static_candidate(r.world, StepTimes::predicted);
  r.hindsight_static_candidate = best_static_candidate(r.world, StepTimes::real);
  r.hindsight_static_time_s = static_time_to_target_s(r.world, r.hindsight_static_candidate, StepTimes::real);
  for (Policy p : kPolicies) r.policies[static_cast<std::size_t>(p)] = simulate_policy(r.world, p, r.fixed_candidate);
  r.offline_optimum = offline_optimum(r.world);
  return r;
}

RunSimulation simulate_training_run(const ModelSpec& model, const Cluster& cluster, const NoiseScaleScenario& scenario,
                                    const CandidateOptions& options) {
  return simulate_training_run(make_training_run_world(model, cluster, scenario, options));
}

}  // namespace tessera
