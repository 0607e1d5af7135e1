#include "adapt/candidate_set.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "adapt/plan_family.h"
#include "core/error.h"
#include "core/parallel_tasks.h"
#include "core/units.h"
#include "core/work_budget.h"
#include "cost/cost_model.h"

namespace tessera {

namespace {

std::size_t index_of_plan(std::vector<Plan>& plans, const Plan& plan) {
  for (std::size_t i = 0; i < plans.size(); ++i)
    if (same_plan(plans[i], plan)) return i;
  plans.push_back(plan);
  return plans.size() - 1;
}

// Links equal up to the rounding of recovering a NIC rate from a bandwidth (a few ulps).
constexpr double kLinkTolerance = 1e-12;

bool same_value(double a, double b) { return std::abs(a - b) <= kLinkTolerance * std::max(std::abs(a), std::abs(b)); }

bool same_links(const Cluster& a, const Cluster& b) {
  return a.nodes == b.nodes && a.gpus_per_node == b.gpus_per_node &&
         same_value(a.intra_node.bandwidth_bytes_per_s, b.intra_node.bandwidth_bytes_per_s) &&
         same_value(a.intra_node.latency_s, b.intra_node.latency_s) &&
         same_value(a.inter_node.bandwidth_bytes_per_s, b.inter_node.bandwidth_bytes_per_s) &&
         same_value(a.inter_node.latency_s, b.inter_node.latency_s);
}

// The planner at every grid batch, the batches in parallel and each search on one thread: a
// search's plans and its count of plans costed are then the same on any machine (the planner's
// own workers share a pruning bound, so their count depends on timing). With a budget, a search
// that overdraws it throws, and the searches not yet started are not run.
std::vector<PlanSearch> search_grid(const ModelSpec& model, const Cluster& cluster, std::int64_t seq_len,
                                    std::span<const std::int64_t> grid, const CandidateOptions& options) {
  PlannerOptions planner;
  planner.top_k = std::max(kPlannerTopK, options.families_per_batch);
  planner.keep_tied_variants = true;
  planner.threads = 1;
  std::vector<PlanSearch> searches(grid.size());
  run_parallel_tasks(grid.size(), options.threads, [&](std::size_t b) {
    searches[b] = search_plans(model, cluster, Workload{grid[b], seq_len}, options.constraints, planner);
    take_work(options.evaluation_budget, searches[b].evaluated, kEvaluationBudgetField);
  });
  return searches;
}

}  // namespace

RunMeasurement CandidateSet::run_of(const Candidate& c) const {
  if (!pricing) throw Error("candidates", "no model and cluster to price them on", "a set from build_candidates");
  RunMeasurement run;
  run.id = "batch " + std::to_string(c.global_batch) + ", plan " + std::to_string(c.plan_index);
  run.model = pricing->model;
  run.gpu = pricing->gpu;
  run.shape = pricing->shape;
  run.plan = plan(c);
  run.workload = workload(c);
  return run;
}

std::optional<ClusterShape> shape_of(const Cluster& cluster) {
  const GpuSpec& gpu = cluster.gpu;
  if (!(gpu.network_efficiency > 0)) return std::nullopt;
  // make_cluster: inter-node bandwidth = NIC rate x network efficiency.
  double nic_gbps = cluster.inter_node.bandwidth_bytes_per_s / units::gbps_to_bytes_per_s(1.0) / gpu.network_efficiency;
  if (same_value(nic_gbps, gpu.network_gbps_per_gpu)) nic_gbps = 0.0;  // the catalog NIC, exactly
  const ClusterShape shape{cluster.gpus(), cluster.gpus_per_node, nic_gbps};
  try {
    if (same_links(cluster_for(gpu, shape), cluster)) return shape;
  } catch (const Error&) {
  }
  return std::nullopt;
}

CandidateSet build_candidates(const ModelSpec& model, const Cluster& cluster, std::int64_t seq_len,
                              std::span<const std::int64_t> grid, const CandidateOptions& options) {
  CandidateSet set;
  set.seq_len = seq_len;
  // 1. The planner's best plans per grid batch: the best plan of each of the fastest families.
  std::vector<std::int64_t> batches;
  std::vector<std::size_t> best_plan_index;
  const std::vector<PlanSearch> searches = search_grid(model, cluster, seq_len, grid, options);
  for (std::size_t b = 0; b < grid.size(); ++b) {
    const PlanSearch& search = searches[b];
    set.plans_evaluated += search.evaluated;
    set.search_time_s += search.search_time_s;
    if (search.plans.empty()) continue;
    std::vector<PlanFamily> seen;
    for (const RankedPlan& ranked : search.plans) {
      const PlanFamily family = family_of(ranked.plan);
      if (std::find(seen.begin(), seen.end(), family) != seen.end()) continue;
      seen.push_back(family);
      const std::size_t index = index_of_plan(set.plans, ranked.plan);
      if (seen.size() == 1) best_plan_index.push_back(index);
      if (seen.size() == options.families_per_batch) break;
    }
    batches.push_back(grid[b]);
  }
  if (batches.empty())
    throw Error("cluster",
                "no plan for " + model.name + " fits on " + std::to_string(cluster.gpus()) + " x " + cluster.gpu.key +
                    " at any batch from " + std::to_string(grid.front()) + " to " + std::to_string(grid.back()),
                "more GPUs, GPUs with more memory, or other batch bounds");
  // 2. Every distinct plan at every grid batch where it is valid and fits.
  for (std::size_t b = 0; b < batches.size(); ++b) {
    const Workload workload{batches[b], seq_len};
    for (std::size_t p = 0; p < set.plans.size(); ++p) {
      try {
        validate_plan(set.plans[p], model, cluster, workload);
      } catch (const Error&) {
        continue;  // this plan's data-parallel size or micro-batch does not divide this batch
      }
      const Estimate e = estimate(model, cluster, set.plans[p], workload);
      if (!e.fits) continue;
      if (p == best_plan_index[b]) set.planner_best.push_back(set.candidates.size());
      set.candidates.push_back(Candidate{batches[b], p, e.iteration_time_s});
    }
  }
  set.batches = std::move(batches);
  if (const auto shape = shape_of(cluster)) set.pricing = CandidatePricing{model, cluster.gpu, *shape};
  return set;
}

}  // namespace tessera
