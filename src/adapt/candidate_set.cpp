#include "adapt/candidate_set.h"

#include <algorithm>
#include <string>

#include "adapt/plan_family.h"
#include "core/error.h"
#include "cost/cost_model.h"

namespace tessera {

namespace {

std::size_t index_of_plan(std::vector<Plan>& plans, const Plan& plan) {
  for (std::size_t i = 0; i < plans.size(); ++i)
    if (same_plan(plans[i], plan)) return i;
  plans.push_back(plan);
  return plans.size() - 1;
}

}  // namespace

CandidateSet build_candidates(const ModelSpec& model, const Cluster& cluster, std::int64_t seq_len,
                              std::span<const std::int64_t> grid, const CandidateOptions& options) {
  CandidateSet set;
  set.seq_len = seq_len;
  PlannerOptions planner;
  planner.top_k = std::max(kPlannerTopK, options.families_per_batch);
  planner.keep_tied_variants = true;
  planner.threads = options.threads;
  // 1. The planner's best plans per grid batch: the best plan of each of the fastest families.
  std::vector<std::int64_t> batches;
  std::vector<std::size_t> best_plan_index;
  for (std::int64_t batch : grid) {
    const PlanSearch search = search_plans(model, cluster, Workload{batch, seq_len}, options.constraints, planner);
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
    batches.push_back(batch);
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
  return set;
}

}  // namespace tessera
