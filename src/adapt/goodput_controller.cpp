#include "adapt/goodput_controller.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "adapt/statistical_efficiency.h"
#include "core/error.h"

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
  current_ = start_candidate();
  history_.push_back(ConfigurationChange{0.0, current_});
}

double GoodputController::noise_scale() const {
  if (gns_.steps() >= options_.min_noise_scale_steps && gns_.has_noise_scale())
    return std::max(0.0, gns_.noise_scale());  // a negative tr(Sigma) average means: no noise measured
  return options_.initial_noise_scale;
}

double GoodputController::predicted_goodput(std::size_t candidate, double noise_scale) const {
  const Candidate& c = candidates_.candidates.at(candidate);
  const double step_time_s = c.predicted_step_time_s * plan_scale_[c.plan_index];
  return goodput(candidates_.tokens_per_s(c, step_time_s), static_cast<double>(c.global_batch), noise_scale,
                 options_.reference_batch);
}

std::size_t GoodputController::start_candidate() const {
  std::size_t best = allowed_.front();
  for (std::size_t i : allowed_)
    if (predicted_goodput(i, options_.initial_noise_scale) > predicted_goodput(best, options_.initial_noise_scale))
      best = i;
  return best;
}

void GoodputController::observe_step(double measured_step_time_s, std::int64_t steps) {
  const Candidate& c = current_candidate();
  const PlanFamily& family = plan_family_[c.plan_index];
  refit_.observe(family, measured_step_time_s, c.predicted_step_time_s, steps);
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
