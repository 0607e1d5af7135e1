// The world the run simulator's policies train in: the candidate configurations with the step times
// the cost model predicts (on the cluster as described) and the step times they really take (on the
// scenario's real cluster), the reconfiguration cost, and the noise-scale trajectory, cut into
// progress segments for the offline optimum.
//
// Progress p is counted in tokens at the reference batch B0: a step at batch B with noise scale
// B_noise makes B x seq_len x E(B) of it (statistical_efficiency.h). Consuming progress [p0, p1] at
// batch B therefore takes
//   tokens(B) = integral (B_noise(p) + B) / (B_noise(p) + B0) dp = (p1 - p0) + (B - B0) J,
//   J = integral dp / (B_noise(p) + B0),
// and time = tokens(B) / throughput; J is tabulated once per segment.
#pragma once

#include <cstddef>
#include <vector>

#include "adapt/candidate_set.h"
#include "adapt/noise_scale_scenario.h"
#include "adapt/reconfiguration_cost.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"

namespace tessera {

// Progress segments of the offline optimum: half log-spaced (the noise scale moves fastest early),
// half evenly spaced, so a switch can land within 0.2% of the run's progress wherever it pays.
inline constexpr int kOptimumSegments = 1000;

struct TrainingRunWorld {
  NoiseScaleScenario scenario;
  CandidateSet candidates;
  std::vector<double> true_step_time_s;  // per candidate, on the real cluster (x step_time_scale)
  ReconfigurationCost cost;
  std::vector<double> segment_end;       // progress tokens at each segment's end (the last = budget)
  std::vector<double> segment_inverse;   // J over each segment (progress tokens per sequence of batch)
  double total_inverse = 0;              // J over the whole run
  std::vector<double> cumulative_inverse;  // J from 0 to each segment's end

  // J from 0 to progress p: linear within a segment, so the noise scale is taken constant over a
  // segment, the same world the offline optimum solves exactly (it then bounds every policy).
  double inverse_to(double progress) const;
  // Tokens consumed at candidate c's batch to go from progress p0 to p1 (p0 <= p1 <= budget).
  double tokens_between(double p0, double p1, std::size_t c) const;
  // The progress reached from p0 after consuming `tokens` at candidate c's batch (at most the
  // budget): the inverse of tokens_between, exact on the same piecewise-linear J.
  double progress_after(double p0, double tokens, std::size_t c) const;

  double segment_start(std::size_t i) const { return i == 0 ? 0.0 : segment_end[i - 1]; }
  // Tokens consumed at candidate c's batch to make the progress of segment i (or of the whole run).
  double segment_tokens(std::size_t i, std::size_t c) const;
  double run_tokens(std::size_t c) const;
  double true_tokens_per_s(std::size_t c) const;
  double predicted_tokens_per_s(std::size_t c) const;
};

// The cluster the scenario really runs on: the described one with its scale-out links' bandwidth
// scaled by scenario.network_bandwidth_scale.
Cluster real_cluster(const Cluster& described, const NoiseScaleScenario& scenario);

TrainingRunWorld make_training_run_world(const ModelSpec& model, const Cluster& cluster,
                                         const NoiseScaleScenario& scenario, const CandidateOptions& options = {});
// The same with candidates already built for this model, cluster and the scenario's seq_len and
// batch bounds (scenarios that share them share the planner's work).
TrainingRunWorld make_training_run_world(const ModelSpec& model, const Cluster& cluster,
                                         const NoiseScaleScenario& scenario, CandidateSet candidates);

}  // namespace tessera
