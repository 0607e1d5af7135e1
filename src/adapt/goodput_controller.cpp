#include "adapt/goodput_controller.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "adapt/statistical_efficiency.h"
#include "core/error.h"
#include "search/planner.h"

namespace tessera {

void ControllerOptions::validate() const {
  if (!std::isfinite(token_budget) || token_budget <= 0.0)
    throw Error("token_budget", "got " + std::to_string(token_budget), "a number of tokens > 0");
  if (!std::isfinite(reference_batch) || reference_batch <= 0.0)
    throw Error("reference_batch", "got " + std::to_string(reference_batch), "a number of sequences > 0");
  if (!std::isfinite(initial_noise_scale) || initial_noise_scale < 0.0)
    throw Error("initial_noise_scale", "got " + std::to_string(initial_noise_scale),
                "a number of sequences >= 0 (0 = the reference batch)");
  if (!std::isfinite(batch_hysteresis) || batch_hysteresis < 0.0)
    throw Error("batch_hysteresis", "got " + std::to_string(batch_hysteresis), "a fraction >= 0");
  if (!std::isfinite(plan_hysteresis) || plan_hysteresis < 0.0)
    throw Error("plan_hysteresis", "got " + std::to_string(plan_hysteresis), "a fraction >= 0");
  if (!std::isfinite(horizon_per_progress) || horizon_per_progress <= 0.0)
    throw Error("horizon_per_progress", "got " + std::to_string(horizon_per_progress), "a number > 0");
  if (min_noise_scale_steps < 1)
    throw Error("min_noise_scale_steps", "got " + std::to_string(min_noise_scale_steps), "an integer >= 1");
  if (!std::isfinite(refit_mean_move) || refit_mean_move <= 0.0)
    throw Error("refit_mean_move", "got " + std::to_string(refit_mean_move), "a fraction > 0");
  if (!std::isfinite(refit_prior_sigma))
    throw Error("refit_prior_sigma", "got " + std::to_string(refit_prior_sigma), "log units > 0, or <= 0 for no prior");
}

GoodputController::GoodputController(CandidateSet candidates, ReconfigurationCost cost, ControllerOptions options,
                                     std::vector<std::size_t> allowed)
    : candidates_(std::move(candidates)),
      cost_(cost),
      options_(options),
      allowed_(std::move(allowed)),
      gns_(options.gns_ema_decay),
      refit_(options.refit_ema_decay) {
  options_.validate();
  if (options_.initial_noise_scale == 0.0) options_.initial_noise_scale = options_.reference_batch;
  if (candidates_.candidates.empty()) throw Error("candidates", "none", "a candidate set from build_candidates");
  if (allowed_.empty())
    for (std::size_t i = 0; i < candidates_.candidates.size(); ++i) allowed_.push_back(i);
  for (std::size_t i : allowed_)
    if (i >= candidates_.candidates.size())
      throw Error("allowed", "candidate " + std::to_string(i) + " does not exist",
                  "indices below " + std::to_string(candidates_.candidates.size()));
  for (const Plan& plan : candidates_.plans) plan_family_.push_back(family_of(plan));
  plan_scale_.assign(candidates_.plans.size(), 1.0);
  for (const Candidate& c : candidates_.candidates) model_step_time_s_.push_back(c.predicted_step_time_s);
  allowed_at_.assign(candidates_.plans.size() * candidates_.batches.size(), kNoCandidate);
  for (std::size_t i : allowed_) {
    const std::size_t slot = plan_batch_slot(candidates_.candidates[i]);
    if (slot < allowed_at_.size()) allowed_at_[slot] = i;
  }
  current_ = start_candidate();
  history_.push_back(ConfigurationChange{0.0, current_});
}

std::size_t GoodputController::plan_batch_slot(const Candidate& c) const {
  const auto& batches = candidates_.batches;
  const auto at = std::lower_bound(batches.begin(), batches.end(), c.global_batch);
  if (at == batches.end() || *at != c.global_batch || c.plan_index >= candidates_.plans.size())
    return allowed_at_.size();  // a set built by hand may list its batches otherwise: no slot
  return c.plan_index * batches.size() + static_cast<std::size_t>(at - batches.begin());
}

bool GoodputController::current_plan_ties(const Candidate& to, std::size_t to_index) const {
  Candidate same = to;
  same.plan_index = current_candidate().plan_index;
  const std::size_t slot = plan_batch_slot(same);
  const std::size_t j = slot < allowed_at_.size() ? allowed_at_[slot] : kNoCandidate;
  return j != kNoCandidate && predicted_step_time_s(j) <= predicted_step_time_s(to_index) * (1.0 + kTimeTieFraction);
}

double GoodputController::noise_scale() const {
  if (gns_.steps() >= options_.min_noise_scale_steps && gns_.has_noise_scale())
    return std::max(0.0, gns_.noise_scale());  // a negative tr(Sigma) average means: no noise measured
  return options_.initial_noise_scale;
}

double GoodputController::predicted_step_time_s(std::size_t candidate) const {
  const Candidate& c = candidates_.candidates.at(candidate);
  return model_step_time_s_[candidate] * plan_scale_[c.plan_index];
}

const GpuSpec* GoodputController::priced_gpu() const {
  if (refitted_gpu_) return &*refitted_gpu_;
  return candidates_.pricing ? &candidates_.pricing->gpu : nullptr;
}

ShardingRatios GoodputController::sharding_ratios(OptimizerSharding zero) const {
  double log_refit = 0, log_catalog = 0, weight = 0;
  for (const ObservedCandidate& o : observed_) {
    const Candidate& c = candidates_.candidates[o.candidate];
    if (plan_family_[c.plan_index].zero != zero) continue;
    const double w = static_cast<double>(o.steps);
    log_refit += w * std::log(o.mean_step_time_s / model_step_time_s_[o.candidate]);
    log_catalog += w * std::log(o.mean_step_time_s / c.predicted_step_time_s);
    weight += w;
  }
  if (weight == 0) return {};
  return {std::exp(log_refit / weight), std::exp(log_catalog / weight)};
}

double GoodputController::decision_step_time_s(std::size_t candidate) const {
  const Candidate& c = candidates_.candidates.at(candidate);
  const double predicted = predicted_step_time_s(candidate);
  const PlanFamily& family = plan_family_[c.plan_index];
  if (refit_.observed(family)) return predicted;
  const ShardingRatios r = sharding_ratios(family.zero);
  return std::min(predicted * r.vs_refit, c.predicted_step_time_s * r.vs_catalog);
}

double GoodputController::predicted_goodput(std::size_t candidate, double noise_scale) const {
  const Candidate& c = candidates_.candidates.at(candidate);
  return goodput(candidates_.tokens_per_s(c, decision_step_time_s(candidate)), static_cast<double>(c.global_batch),
                 noise_scale, options_.reference_batch);
}

std::size_t GoodputController::start_candidate() const {
  std::size_t best = allowed_.front();
  for (std::size_t i : allowed_)
    if (predicted_goodput(i, options_.initial_noise_scale) > predicted_goodput(best, options_.initial_noise_scale))
      best = i;
  return best;
}

bool GoodputController::record(double measured_step_time_s, std::int64_t steps) {
  auto it = std::find_if(observed_.begin(), observed_.end(),
                         [&](const ObservedCandidate& o) { return o.candidate == current_; });
  if (it == observed_.end()) {
    observed_.push_back(ObservedCandidate{current_, measured_step_time_s, steps, 0.0});
    return true;
  }
  const double total = static_cast<double>(it->steps + steps);
  it->mean_step_time_s += (measured_step_time_s - it->mean_step_time_s) * static_cast<double>(steps) / total;
  it->steps += steps;
  return std::abs(it->mean_step_time_s / it->mean_at_refit_s - 1.0) > options_.refit_mean_move;
}

void GoodputController::refit_cost_model() {
  const CandidateSet& set = candidates_;
  CalibrationData data;
  for (ObservedCandidate& o : observed_) {
    RunMeasurement run = set.run_of(set.candidates[o.candidate]);
    run.iteration_time_s = o.mean_step_time_s;
    data.runs.push_back(std::move(run));
    o.mean_at_refit_s = o.mean_step_time_s;
  }
  CalibrationOptions options;
  options.terms = kOnlineRefitTerms;
  options.prior_sigma = options_.refit_prior_sigma;
  profile_ = calibrate(data, options);
  refitted_gpu_ = calibrated_gpu(set.pricing->gpu, *profile_);
  // New prices; each family's residual moves by its observed candidates' old / new price (their
  // geometric mean, weighted by steps: exact for a family observed at one batch, and within one
  // family the refit moves every batch about alike).
  std::vector<double> old_time_s = model_step_time_s_;
  for (std::size_t i = 0; i < set.candidates.size(); ++i)
    model_step_time_s_[i] = predict_iteration_time_s(set.run_of(set.candidates[i]), *refitted_gpu_);
  std::vector<double> log_sum(plan_family_.size(), 0.0), weight(plan_family_.size(), 0.0);
  for (const ObservedCandidate& o : observed_) {
    const std::size_t p = set.candidates[o.candidate].plan_index;
    const double w = static_cast<double>(o.steps);
    log_sum[p] += w * std::log(old_time_s[o.candidate] / model_step_time_s_[o.candidate]);
    weight[p] += w;
  }
  // Plans of one family share its residual: sum their logs per family, rescale it once.
  for (std::size_t p = 0; p < plan_family_.size(); ++p) {
    if (weight[p] == 0.0) continue;
    double family_log = 0, family_weight = 0;
    for (std::size_t q = p; q < plan_family_.size(); ++q)
      if (plan_family_[q] == plan_family_[p]) {
        family_log += log_sum[q];
        family_weight += weight[q];
        weight[q] = 0.0;
      }
    refit_.rescale(plan_family_[p], std::exp(family_log / family_weight));
  }
  for (std::size_t p = 0; p < plan_family_.size(); ++p) plan_scale_[p] = refit_.scale(plan_family_[p]);
  ++refit_count_;
}

void GoodputController::observe_step(double measured_step_time_s, std::int64_t steps) {
  const Candidate& c = current_candidate();
  const PlanFamily& family = plan_family_[c.plan_index];
  // Checked here too: the refit must not take in a time the residual would reject.
  if (!std::isfinite(measured_step_time_s) || measured_step_time_s <= 0.0)
    throw Error("measured_step_time_s", "got " + std::to_string(measured_step_time_s), "a number > 0");
  if (steps < 1) throw Error("steps", "got " + std::to_string(steps), "an integer >= 1");
  if (refits_cost_model() && record(measured_step_time_s, steps)) refit_cost_model();
  refit_.observe(family, measured_step_time_s, model_step_time_s_[current_], steps);
  const double scale = refit_.scale(family);
  for (std::size_t p = 0; p < plan_family_.size(); ++p)
    if (plan_family_[p] == family) plan_scale_[p] = scale;
  const double tokens = static_cast<double>(c.global_batch * candidates_.seq_len * steps);
  consumed_tokens_ += tokens;
  progress_tokens_ +=
      tokens * statistical_efficiency(static_cast<double>(c.global_batch), noise_scale(), options_.reference_batch);
}

void GoodputController::observe_gradients(double small_sq_norm, double small_batch, double big_sq_norm,
                                          double big_batch, std::int64_t steps) {
  gns_.update(small_sq_norm, small_batch, big_sq_norm, big_batch, steps);
}

ControllerDecision GoodputController::decide() const {
  ControllerDecision d;
  d.candidate = current_;
  d.noise_scale = noise_scale();
  d.current_goodput = predicted_goodput(current_, d.noise_scale);
  d.candidate_goodput = d.current_goodput;
  d.horizon_tokens =
      std::min(options_.token_budget - progress_tokens_, options_.horizon_per_progress * progress_tokens_);
  if (d.horizon_tokens <= 0.0) return d;
  const double stay_s = d.horizon_tokens / d.current_goodput;
  const Candidate& from = current_candidate();
  for (std::size_t i : allowed_) {
    if (i == current_) continue;
    const Candidate& to = candidates_.candidates[i];
    const bool plan_change = to.plan_index != from.plan_index;
    // No restart for a plan the current one ties with at that batch (the planner's tie tolerance):
    // the batch-only change to the current plan is a candidate of its own.
    if (plan_change && current_plan_ties(to, i)) continue;
    const double margin = plan_change ? options_.plan_hysteresis : options_.batch_hysteresis;
    const double g = predicted_goodput(i, d.noise_scale);
    if (g < d.current_goodput * (1.0 + margin)) continue;
    const double cost_s = switch_time_s(cost_, candidates_.plan(from), from.global_batch, candidates_.plan(to),
                                        to.global_batch);
    const double saving_s = stay_s - (d.horizon_tokens / g + cost_s);
    if (saving_s > d.predicted_saving_s) {
      d.switch_now = true;
      d.candidate = i;
      d.candidate_goodput = g;
      d.predicted_saving_s = saving_s;
      d.switch_cost_s = cost_s;
    }
  }
  return d;
}

std::vector<BatchScheduleEntry> GoodputController::batch_schedule() const {
  std::vector<BatchScheduleEntry> entries;
  for (const ConfigurationChange& change : history_)
    entries.push_back(BatchScheduleEntry{change.consumed_tokens, candidates_.candidates[change.candidate].global_batch});
  return entries;
}

void GoodputController::switch_to(std::size_t candidate) {
  if (std::find(allowed_.begin(), allowed_.end(), candidate) == allowed_.end())
    throw Error("candidate", std::to_string(candidate) + " is not one this controller may use",
                "an index from allowed()");
  if (candidate == current_) return;
  current_ = candidate;
  if (history_.back().consumed_tokens == consumed_tokens_)
    history_.back().candidate = candidate;  // switched before any step ran on the previous one
  else
    history_.push_back(ConfigurationChange{consumed_tokens_, candidate});
}

}  // namespace tessera
