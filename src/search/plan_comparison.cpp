#include "search/plan_comparison.h"

#include "cost/cost_model.h"
#include "search/plan_space.h"

namespace tessera {

namespace {

std::optional<RankedPlan> best_plan(const ModelSpec& model, const Cluster& cluster, const Workload& workload,
                                    const PlanConstraints& constraints, const PlannerOptions& options) {
  const PlanSearch search = search_plans(model, cluster, workload, constraints, options);
  if (search.plans.empty()) return std::nullopt;
  return search.plans.front();
}

bool same_segments(const CrossPoolPlan& a, const CrossPoolPlan& b) {
  if (!same_configuration(a.base, b.base) || a.segments.size() != b.segments.size()) return false;
  for (std::size_t i = 0; i < a.segments.size(); ++i) {
    const PipelineSegment &x = a.segments[i], &y = b.segments[i];
    if (x.pool != y.pool || x.tp != y.tp || x.stages != y.stages || x.layers != y.layers) return false;
  }
  return true;
}

bool same_pools(const std::vector<PoolAssignment>& a, const std::vector<PoolAssignment>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (a[i].pool != b[i].pool || a[i].global_batch != b[i].global_batch ||
        !same_configuration(a[i].plan.plan, b[i].plan.plan))
      return false;
  return true;
}

}  // namespace

PlanComparison compare_plans(const ModelSpec& model, const Cluster& old_cluster, const Cluster& new_cluster,
                             const Workload& workload, const PlanConstraints& constraints,
                             const PlannerOptions& options) {
  PlanComparison c;
  c.old_best = best_plan(model, old_cluster, workload, constraints, options);
  c.new_best = best_plan(model, new_cluster, workload, constraints, options);
  if (!c.old_best || !c.new_best) return c;
  c.old_plan_now = estimate(model, new_cluster, c.old_best->plan, workload);
  c.old_plan_fits_now = c.old_plan_now.peak_memory_bytes <= memory_limit(new_cluster, constraints).limit_bytes;
  c.changed = !same_configuration(c.old_best->plan, c.new_best->plan);
  c.keeping = {c.old_plan_now.iteration_time_s, c.new_best->estimate.iteration_time_s};
  return c;
}

MixedPlanComparison compare_mixed_plans(const ModelSpec& model, const MixedCluster& old_cluster,
                                        const MixedCluster& new_cluster, const Workload& workload,
                                        const PlanConstraints& constraints, const PlannerOptions& options) {
  MixedPlanComparison c;
  c.old_best = search_mixed_plans(model, old_cluster, workload, constraints, options);
  c.new_best = search_mixed_plans(model, new_cluster, workload, constraints, options);
  if (!c.both_fit()) return c;
  c.changed = !same_mixed_plan(c.old_best, c.new_best);
  c.keeping = {mixed_plan_time_s(model, new_cluster, workload, c.old_best), c.new_best.iteration_time_s};
  return c;
}

bool same_mixed_plan(const MixedPlan& a, const MixedPlan& b) {
  if (a.strategy != b.strategy) return false;
  switch (a.strategy) {
    case MixedStrategy::none:
      return true;
    case MixedStrategy::cross_pool:
      return a.cross_pool && b.cross_pool && same_segments(*a.cross_pool, *b.cross_pool);
    case MixedStrategy::single_pool:
    case MixedStrategy::whole_replicas:
      return same_pools(a.pools, b.pools);
  }
  return false;
}

}  // namespace tessera
