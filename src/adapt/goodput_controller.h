// The goodput controller: picks the global batch size and the parallel plan together while a job
// runs, from what it has measured so far only (COPUS, 2026: co-adapting batch size and parallelism
// by goodput; Pollux, OSDI'21: goodput = throughput x statistical efficiency).
//
// It keeps
//   - the gradient noise scale, from squared gradient norms at a small and the big batch
//     (gradient_noise_scale.h), and
//   - one throughput scale per plan family, from measured step times (throughput_refit.h),
// and at each decision compares every candidate configuration (candidate_set.h):
//   goodput(c) = tokens/s predicted by the cost model / family scale x E(B_c)   (tokens of progress/s)
// It switches to the candidate that saves the most time over the horizon ahead,
//   horizon / goodput(current) - (horizon / goodput(c) + switch cost(current -> c)) > 0,
// and only if c's goodput beats the current one by a hysteresis margin (smaller for a batch-only
// change, which needs no restart, than for a plan change), so estimate noise does not make it flap.
// The horizon is the rest of the run (token budget less the progress made, i.e. tokens x E at the
// noise scale measured when they were consumed), but no more than the progress made so far: the
// noise scale drifts with the progress made (it grows as a power of the tokens seen early in
// training: Kaplan et al. 2020, section 5.1), so today's estimate is trusted for about as much
// progress again, and a restart must pay for itself within it.
//
// A small value type, so a Python binding can drive it from a training loop: observe_step after
// each step, observe_gradients when the norms are there, decide every few steps, switch_to after
// applying a switch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "adapt/batch_schedule.h"
#include "adapt/candidate_set.h"
#include "adapt/gradient_noise_scale.h"
#include "adapt/plan_family.h"
#include "adapt/reconfiguration_cost.h"
#include "adapt/throughput_refit.h"

namespace tessera {

// Relative goodput gain a switch must promise. A batch-only change is free, so its margin only has
// to exceed the noise in the ratio of two candidates' goodput (d ln ratio / d ln B_noise is at most
// ~0.2 for batches within 2x of each other near B_noise, so ~1% at the estimator's ~5-10% noise);
// a plan change also costs a restart, and a wider margin keeps noise from trading restarts back
// and forth.
inline constexpr double kBatchSwitchHysteresis = 0.01;
inline constexpr double kPlanSwitchHysteresis = 0.02;
// The horizon a decision looks ahead, as a multiple of the progress made so far.
inline constexpr double kHorizonPerProgress = 1.0;
// Steps of gradient norms before the measured noise scale replaces the initial guess: one time
// constant of the estimator's moving average.
inline constexpr std::int64_t kMinNoiseScaleSteps = 100;

struct ControllerOptions {
  double token_budget = 0;         // tokens of progress to the target, counted at the reference batch
  double reference_batch = 0;      // B0 of statistical_efficiency.h, sequences
  double initial_noise_scale = 0;  // sequences, assumed until measured; 0 = the reference batch
  double batch_hysteresis = kBatchSwitchHysteresis;
  double plan_hysteresis = kPlanSwitchHysteresis;
  double horizon_per_progress = kHorizonPerProgress;
  std::int64_t min_noise_scale_steps = kMinNoiseScaleSteps;
  double gns_ema_decay = kGnsEmaDecay;
  double refit_ema_decay = kRefitEmaDecay;
  void validate() const;  // throws Error naming the field
};

struct ControllerDecision {
  bool switch_now = false;
  std::size_t candidate = 0;      // the one to switch to; the current one when staying
  double noise_scale = 0;         // sequences, as used
  double current_goodput = 0;     // tokens of progress per second
  double candidate_goodput = 0;
  double horizon_tokens = 0;      // progress looked ahead (tokens at the reference batch)
  double predicted_saving_s = 0;  // over the horizon, net of the switch cost
  double switch_cost_s = 0;
};

// One entry of the run's configuration history.
struct ConfigurationChange {
  double consumed_tokens = 0;  // when the change took effect
  std::size_t candidate = 0;
};

class GoodputController {
 public:
  // `allowed`: the candidates this controller may use (indices into candidates.candidates); empty =
  // all. Starts on start_candidate() unless switch_to is called before the first step.
  GoodputController(CandidateSet candidates, ReconfigurationCost cost, ControllerOptions options,
                    std::vector<std::size_t> allowed = {});

  // The allowed candidate with the best predicted goodput at the initial noise scale.
  std::size_t start_candidate() const;

  // `steps` steps ran on the current candidate, taking `measured_step_time_s` each on average.
  void observe_step(double measured_step_time_s, std::int64_t steps = 1);
  // Squared gradient norms of those steps (gradient_noise_scale.h, GnsEstimator::update).
  void observe_gradients(double small_sq_norm, double small_batch, double big_sq_norm, double big_batch,
                         std::int64_t steps = 1);
  ControllerDecision decide() const;
  // The job now runs `candidate` (after a decision, or to override it). Throws Error if not allowed.
  void switch_to(std::size_t candidate);

  std::size_t current() const { return current_; }
  const Candidate& current_candidate() const { return candidates_.candidates[current_]; }
  const CandidateSet& candidates() const { return candidates_; }
  const std::vector<std::size_t>& allowed() const { return allowed_; }
  double noise_scale() const;  // the measured one once trusted, else the initial guess (sequences)
  const GnsEstimator& noise_estimator() const { return gns_; }
  const ThroughputRefit& refit() const { return refit_; }
  double consumed_tokens() const { return consumed_tokens_; }
  double progress_tokens() const { return progress_tokens_; }  // estimated, at the reference batch
  const std::vector<ConfigurationChange>& history() const { return history_; }
  // The global batch by consumed tokens so far, for megatron_batch_schedule().
  std::vector<BatchScheduleEntry> batch_schedule() const;
  // Goodput of a candidate at a noise scale with the current refit (tokens of progress per second).
  double predicted_goodput(std::size_t candidate, double noise_scale) const;

 private:
  CandidateSet candidates_;
  ReconfigurationCost cost_;
  ControllerOptions options_;
  std::vector<std::size_t> allowed_;
  GnsEstimator gns_;
  ThroughputRefit refit_;
  std::vector<PlanFamily> plan_family_;  // per plan of the candidate set
  std::vector<double> plan_scale_;       // refit scale per plan (its family's), kept current
  std::size_t current_ = 0;
  double consumed_tokens_ = 0;
  double progress_tokens_ = 0;
  std::vector<ConfigurationChange> history_;
};

}  // namespace tessera
