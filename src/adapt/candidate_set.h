// The configurations the goodput controller chooses among: global batch sizes on a grid, each with
// the planner's best plans for it (the best of each of the few fastest plan families), and every
// one of those plans at every other grid batch it can run (so a batch-size-only change, which needs
// no restart, is always a candidate).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "calibrate/measurement.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"
#include "search/planner.h"

namespace tessera {

// Plans kept per grid batch: the planner's best, and the best of the next fastest families, so the
// throughput refit has somewhere to go when a family runs slower than the cost model predicts.
inline constexpr std::size_t kFamiliesPerBatch = 3;
// Ranked plans the planner returns per batch to find those families among.
inline constexpr std::size_t kPlannerTopK = 32;

struct Candidate {
  std::int64_t global_batch = 0;     // sequences per step
  std::size_t plan_index = 0;        // into CandidateSet::plans
  double predicted_step_time_s = 0;  // estimate() on the cluster as described
};

// What the candidates were priced on, so the goodput controller can price them again with a GPU
// refitted to the step times it measures (calibrate/calibration.h): the model, the catalog GPU
// and the cluster's shape, with cluster_for(gpu, shape) the cluster of build_candidates.
struct CandidatePricing {
  ModelSpec model;
  GpuSpec gpu;
  ClusterShape shape;
};

struct CandidateSet {
  std::int64_t seq_len = 0;
  std::vector<std::int64_t> batches;  // grid batches with at least one plan that fits
  std::vector<Plan> plans;            // distinct plans
  std::vector<Candidate> candidates;  // every (batch, plan) pair that is valid and fits, by batch
  // Per entry of `batches`: the index in `candidates` of the planner's best plan for it.
  std::vector<std::size_t> planner_best;
  std::int64_t plans_evaluated = 0;  // by the planner, over all batches
  double search_time_s = 0;          // summed over the batches' searches (which run in parallel)
  // Set by build_candidates when the cluster is a GPU plus a shape (make_cluster's, as every
  // loader builds it); absent for step times the caller gave (no model): then the controller
  // only scales each family's given times by what it measures.
  std::optional<CandidatePricing> pricing;

  const Plan& plan(const Candidate& c) const { return plans[c.plan_index]; }
  Workload workload(const Candidate& c) const { return Workload{c.global_batch, seq_len}; }
  // The candidate as a run `calibrate` fits to and predict_iteration_time_s prices (no measured
  // time yet). Requires `pricing`.
  RunMeasurement run_of(const Candidate& c) const;
  // Tokens per second of a candidate at a step time.
  double tokens_per_s(const Candidate& c, double step_time_s) const {
    return static_cast<double>(c.global_batch * seq_len) / step_time_s;
  }
};

struct CandidateOptions {
  std::size_t families_per_batch = kFamiliesPerBatch;
  // --fix style pins, passed to the planner. bf16 by default: the built-in scenarios (and the
  // ZeRO-3 misprediction one) are bf16 runs; add Precision::fp8 to precision_choices for FP8.
  PlanConstraints constraints = bf16_constraints();
  static PlanConstraints bf16_constraints() {
    PlanConstraints c;
    c.precision_choices = {Precision::bf16};
    return c;
  }
  // Grid batches searched at once (each search on one thread); 0 = hardware concurrency. The
  // candidates and the count of plans costed are the same for any value.
  int threads = 0;
  // When set, each grid batch's search takes the plans it costed from this budget (shared by
  // the cells of a map); build_candidates throws Error(kEvaluationBudgetField, ...) once it is
  // overdrawn, i.e. exactly when the searches together cost more than it held.
  std::atomic<std::int64_t>* evaluation_budget = nullptr;
};
inline constexpr const char* kEvaluationBudgetField = "plan evaluations";

// The shape of a cluster when cluster_for(cluster.gpu, shape) rebuilds its links exactly (to
// rounding); nullopt for links edited after make_cluster.
std::optional<ClusterShape> shape_of(const Cluster& cluster);

// Runs the planner once per grid batch. Throws Error("cluster", ...) when no grid batch has a plan
// that fits.
CandidateSet build_candidates(const ModelSpec& model, const Cluster& cluster, std::int64_t seq_len,
                              std::span<const std::int64_t> grid, const CandidateOptions& options = {});

}  // namespace tessera
