// The goodput controller: picks the global batch size and the parallel plan together while a job
// runs, from what it has measured so far only (COPUS, 2026: co-adapting batch size and parallelism
// by goodput; Pollux, OSDI'21: goodput = throughput x statistical efficiency).
//
// It keeps
//   - the gradient noise scale, from squared gradient norms at a small and the big batch
//     (gradient_noise_scale.h), and
//   - the cost model refitted to the step times measured so far (when the candidates know their
//     model and cluster, CandidateSet::pricing): one mean step time per (plan, batch) run, and the
//     GPU's compute and host parameters fitted to them by calibrate() (calibrate/calibration.h),
//     the fit behind `tessera calibrate`; every candidate is priced again with the refitted GPU,
//     so measuring one family moves the predictions of the families never run, and
//   - one residual scale per plan family on top of that, measured / refitted-predicted step time
//     (throughput_refit.h), for what is specific to a family (a ZeRO-3 gather the model misses),
// and at each decision compares every candidate configuration (candidate_set.h):
//   goodput(c) = tokens/s at the refitted step time x family residual x E(B_c)  (tokens of progress/s)
// (a family never run: at the better of that and its catalog step time times its sharding's
// measured ratio, decision_step_time_s)
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
#include <optional>
#include <vector>

#include "adapt/batch_schedule.h"
#include "adapt/candidate_set.h"
#include "adapt/gradient_noise_scale.h"
#include "adapt/plan_family.h"
#include "adapt/reconfiguration_cost.h"
#include "adapt/throughput_refit.h"
#include "calibrate/calibration.h"

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

// A refit runs when a (plan, batch) is run for the first time, or when the mean step time measured
// on one moved by more than this fraction since the last refit: the run-to-run spread of repeated
// training steps is ~1-2% (vTrain, Bang et al. MICRO'24, section 6.1), so a smaller move is noise
// the fit would chase, and the per-family residual follows it in the meantime.
inline constexpr double kRefitMeanMoveFraction = 0.01;

// What the online refit may move: the GPU's compute and host parameters. Step times of a few
// layouts on one cluster pin down how fast its kernels and its host run; the link parameters
// trade against those (overlap hides communication) and are identified by collective benchmarks
// (`tessera calibrate --nccl`) instead; a family whose communication the model misses is what the
// per-family residual corrects.
inline const std::vector<ParameterTerm> kOnlineRefitTerms = {ParameterTerm::compute, ParameterTerm::host};
// The online refit's prior around the catalog values (CalibrationOptions::prior_sigma; <= 0: none)
// decides how one family's measured error is split between the GPU (every family's price moves)
// and that family's residual. One family's step time cannot tell the two apart: a GPU whose GEMMs
// run at 0.85x and a ZeRO-3 layout whose gathers the model misses look the same. calibrate's prior
// (kPriorSigma) is weighed against unit-weight log residuals under a soft-L1 loss, and one mean
// moves the GPU most of the way: measured, a run 17.5% slower than predicted moves gemm_efficiency
// 0.72 -> 0.58 and is left 4.5% off (about three quarters of its log error; `tessera calibrate
// --runs` on one row), and in the zero3-slower scenario on 32 H100 (Llama 3 8B) one ZeRO-3 family
// 18.2% slow raises every never-run family's price by about 15%. So a family-specific error is
// mostly repriced into every family; what lets the controller leave a mispredicted family is
// that decisions price a family never run at the better of its refitted and its catalog price
// (decision_step_time_s). 0 trusts the measurements fully.

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
  double refit_mean_move = kRefitMeanMoveFraction;  // > 0
  double refit_prior_sigma = kPriorSigma;          // log units; <= 0: no prior
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

// What the controller measured on one candidate (one plan at one batch), all steps together.
struct ObservedCandidate {
  std::size_t candidate = 0;
  double mean_step_time_s = 0;
  std::int64_t steps = 0;
  double mean_at_refit_s = 0;  // the mean the last refit used (0: not refitted with it yet)
};

struct ShardingRatios {
  double vs_refit = 1, vs_catalog = 1;
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
  // Whether the candidates know their model and cluster, so the cost model is refitted online.
  bool refits_cost_model() const { return candidates_.pricing.has_value(); }
  // Refits of the cost model so far (each prices every candidate again).
  std::int64_t refit_count() const { return refit_count_; }
  // The last refit's profile (fitted parameters, each measurement before and after); nullptr
  // before the first.
  const CalibrationProfile* refit_profile() const { return profile_ ? &*profile_ : nullptr; }
  // The GPU the candidates are priced with now: the refitted one, else the catalog's (nullptr
  // without pricing).
  const GpuSpec* priced_gpu() const;
  const std::vector<ObservedCandidate>& observed() const { return observed_; }
  // The cost model's step time of a candidate with the refitted GPU (the candidate set's until a
  // refit), and that times its family's residual scale: what goodput is computed from.
  double model_step_time_s(std::size_t candidate) const { return model_step_time_s_.at(candidate); }
  double predicted_step_time_s(std::size_t candidate) const;
  // The step time a decision prices a candidate at. A step time measured on the families run so
  // far cannot tell a GPU slower than the catalog from those families being slower than the model
  // says (the online refit's prior, above): a family never run is priced at the better of the two
  // readings until it is run -- its refitted price (the GPU is slow) or its catalog price (the
  // families run are), each times what the run plans that shard the optimizer as it does measured
  // against that price (their collectives are the likeliest to be mispriced alike;
  // sharding_ratios). Optimism in the face of uncertainty: a wrong optimistic guess costs one
  // restart and is then measured, a wrong pessimistic one is never revisited.
  double decision_step_time_s(std::size_t candidate) const;
  // Measured over refitted and over catalog step time of the (plan, batch) pairs run so far whose
  // plans shard the optimizer as `zero` (geometric means, weighted by steps); 1 when none ran.
  ShardingRatios sharding_ratios(OptimizerSharding zero) const;
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
  std::vector<double> plan_scale_;       // residual scale per plan (its family's), kept current
  std::vector<double> model_step_time_s_;  // per candidate, with the refitted GPU
  std::vector<ObservedCandidate> observed_;
  // Per (plan, grid batch): the allowed candidate there, or kNoCandidate.
  static constexpr std::size_t kNoCandidate = static_cast<std::size_t>(-1);
  std::vector<std::size_t> allowed_at_;
  std::optional<CalibrationProfile> profile_;
  std::optional<GpuSpec> refitted_gpu_;
  std::int64_t refit_count_ = 0;
  std::size_t current_ = 0;
  double consumed_tokens_ = 0;
  double progress_tokens_ = 0;
  std::vector<ConfigurationChange> history_;

  std::size_t plan_batch_slot(const Candidate& c) const;
  // Whether the current plan runs `to`'s batch (allowed) predicted within the planner's tie
  // tolerance (kTimeTieFraction) of `to`: then switching to `to` would pay a restart for nothing.
  bool current_plan_ties(const Candidate& to, std::size_t to_index) const;
  // Adds the steps to the current candidate's mean; true when a refit would use new information.
  bool record(double measured_step_time_s, std::int64_t steps);
  // calibrate() over every observed candidate, every candidate priced again, the residuals moved
  // onto the new prices.
  void refit_cost_model();
};

}  // namespace tessera
