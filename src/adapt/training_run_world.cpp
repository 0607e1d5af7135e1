#include "adapt/training_run_world.h"

#include <algorithm>
#include <cmath>

#include "adapt/batch_grid.h"
#include "core/error.h"
#include "cost/cost_model.h"

namespace tessera {

namespace {

// Simpson's rule over each segment with this many sub-intervals (even): the noise scale is smooth
// (log-linear between the trajectory's points) within a segment.
constexpr int kSimpsonIntervals = 8;
// The log-spaced half of the segments starts at this fraction of the budget.
constexpr double kFirstSegmentFraction = 1e-7;

double inverse_integral(const NoiseScaleScenario& s, double p0, double p1) {
  const double b0 = static_cast<double>(s.reference_batch);
  auto f = [&](double p) { return 1.0 / (s.noise_scale_at(p) + b0); };
  const double h = (p1 - p0) / kSimpsonIntervals;
  double sum = f(p0) + f(p1);
  for (int k = 1; k < kSimpsonIntervals; ++k) sum += (k % 2 == 1 ? 4.0 : 2.0) * f(p0 + k * h);
  return sum * h / 3.0;
}

}  // namespace

double TrainingRunWorld::segment_tokens(std::size_t i, std::size_t c) const {
  const double batch = static_cast<double>(candidates.candidates[c].global_batch);
  return (segment_end[i] - segment_start(i)) +
         (batch - static_cast<double>(scenario.reference_batch)) * segment_inverse[i];
}

double TrainingRunWorld::run_tokens(std::size_t c) const {
  const double batch = static_cast<double>(candidates.candidates[c].global_batch);
  return scenario.token_budget +
         (batch - static_cast<double>(scenario.reference_batch)) * total_inverse;
}

double TrainingRunWorld::inverse_to(double progress) const {
  const auto it = std::lower_bound(segment_end.begin(), segment_end.end(), progress);
  if (it == segment_end.end()) return total_inverse;
  const std::size_t i = static_cast<std::size_t>(it - segment_end.begin());
  const double start = segment_start(i), before = i == 0 ? 0.0 : cumulative_inverse[i - 1];
  const double f = (progress - start) / (segment_end[i] - start);
  return before + std::clamp(f, 0.0, 1.0) * segment_inverse[i];
}

double TrainingRunWorld::tokens_between(double p0, double p1, std::size_t c) const {
  const double batch = static_cast<double>(candidates.candidates[c].global_batch);
  return (p1 - p0) + (batch - static_cast<double>(scenario.reference_batch)) * (inverse_to(p1) - inverse_to(p0));
}

double TrainingRunWorld::progress_after(double p0, double tokens, std::size_t c) const {
  // tokens_between(p0, p) grows with p (its slope (B_noise + B) / (B_noise + B0) > 0), linearly
  // within each segment: find the segment, then solve the line.
  const double target = tokens_between(0.0, p0, c) + tokens;
  const double budget = scenario.token_budget;
  if (target >= tokens_between(0.0, budget, c)) return budget;
  std::size_t lo = 0, hi = segment_end.size() - 1;  // first segment whose end reaches the target
  while (lo < hi) {
    const std::size_t mid = (lo + hi) / 2;
    if (tokens_between(0.0, segment_end[mid], c) < target) lo = mid + 1; else hi = mid;
  }
  const double start = segment_start(lo);
  const double at_start = tokens_between(0.0, start, c), at_end = tokens_between(0.0, segment_end[lo], c);
  const double p = start + (target - at_start) / (at_end - at_start) * (segment_end[lo] - start);
  return std::clamp(p, p0, budget);
}

double TrainingRunWorld::true_tokens_per_s(std::size_t c) const {
  return candidates.tokens_per_s(candidates.candidates[c], true_step_time_s[c]);
}

double TrainingRunWorld::predicted_tokens_per_s(std::size_t c) const {
  return candidates.tokens_per_s(candidates.candidates[c], candidates.candidates[c].predicted_step_time_s);
}

Cluster real_cluster(const Cluster& described, const NoiseScaleScenario& scenario) {
  Cluster real = described;
  real.inter_node.bandwidth_bytes_per_s *= scenario.network_bandwidth_scale;
  return real;
}

namespace {
void require_seq_len_fits(const ModelSpec& model, const NoiseScaleScenario& scenario) {
  if (scenario.seq_len > model.max_context)
    throw Error("scenario.seq_len", "got " + std::to_string(scenario.seq_len) + " for " + model.name,
                "1 to the model's context, " + std::to_string(model.max_context));
}
}  // namespace

TrainingRunWorld make_training_run_world(const ModelSpec& model, const Cluster& cluster,
                                         const NoiseScaleScenario& scenario, const CandidateOptions& options) {
  scenario.validate();
  require_seq_len_fits(model, scenario);
  const std::vector<std::int64_t> grid = batch_grid(scenario.min_batch, scenario.max_batch);
  return make_training_run_world(model, cluster, scenario,
                                 build_candidates(model, cluster, scenario.seq_len, grid, options));
}

TrainingRunWorld make_training_run_world(const ModelSpec& model, const Cluster& cluster,
                                         const NoiseScaleScenario& scenario, CandidateSet candidates) {
  scenario.validate();
  require_seq_len_fits(model, scenario);
  if (candidates.seq_len != scenario.seq_len)
    throw Error("candidates", "built for seq_len " + std::to_string(candidates.seq_len) + ", the scenario has " +
                                  std::to_string(scenario.seq_len),
                "candidates built for the scenario's seq_len");
  TrainingRunWorld w;
  w.scenario = scenario;
  w.candidates = std::move(candidates);
  const Cluster real = real_cluster(cluster, scenario);
  for (const Candidate& c : w.candidates.candidates) {
    const Plan& plan = w.candidates.plan(c);
    w.true_step_time_s.push_back(estimate(model, real, plan, w.candidates.workload(c)).iteration_time_s *
                                 scenario.step_time_scale.of(plan));
  }
  w.cost = reconfiguration_cost(model, cluster);
  // Segment boundaries: log-spaced and evenly spaced halves, merged.
  const double budget = scenario.token_budget;
  const int half = kOptimumSegments / 2;
  std::vector<double> ends;
  for (int i = 1; i <= half; ++i) {
    ends.push_back(budget * static_cast<double>(i) / half);
    ends.push_back(budget * std::pow(kFirstSegmentFraction, 1.0 - static_cast<double>(i) / half));
  }
  std::sort(ends.begin(), ends.end());
  ends.erase(std::unique(ends.begin(), ends.end(), [&](double a, double b) { return b - a <= budget * 1e-12; }),
             ends.end());
  ends.back() = budget;
  for (std::size_t i = 0; i < ends.size(); ++i) {
    const double start = i == 0 ? 0.0 : ends[i - 1];
    w.segment_end.push_back(ends[i]);
    w.segment_inverse.push_back(inverse_integral(scenario, start, ends[i]));
    w.total_inverse += w.segment_inverse.back();
    w.cumulative_inverse.push_back(w.total_inverse);
  }
  return w;
}

}  // namespace tessera
