#include "search/mixed_planner.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <string>

#include "core/error.h"
#include "cost/cost_model.h"

#include "cost/collective_cost.h"
#include "model/parameter_count.h"
#include "search/cross_pool_search.h"

namespace tessera {

namespace {

// Sequences moved per refinement step: 1/64 of the slowest pool's share (at least one).
constexpr std::int64_t kMoveFraction = 64;
constexpr int kMaxRefinements = 64;
// Shares are whole multiples of this many sequences where the batch allows: a pool's data-parallel
// degree (and micro-batch) must divide its share, and shares in proportion to speed rarely do.
constexpr std::int64_t kShareQuantum = 8;
// Probing a pool's speed when the whole batch does not fit it: halve the batch up to this often.
constexpr int kMaxProbeHalvings = 12;

}  // namespace

double cross_pool_sync_s(const ModelSpec& model, const MixedCluster& cluster, std::size_t pools) {
  if (pools < 2) return 0.0;
  // fp32 gradients of the whole model, reduced across pools after each pool's own reduction.
  constexpr double kGradBytesPerParam = 4.0;
  const GroupLink link{cluster.inter_pool.bandwidth_bytes_per_s, cluster.inter_pool.latency_s};
  return all_reduce_time_s(kGradBytesPerParam * count_parameters(model).total(),
                           static_cast<std::int64_t>(pools), link);
}

const char* to_string(MixedStrategy strategy) {
  switch (strategy) {
    case MixedStrategy::single_pool: return "single-pool";
    case MixedStrategy::whole_replicas: return "whole-replicas";
    case MixedStrategy::cross_pool: return "cross-pool";
    case MixedStrategy::none: break;
  }
  return "none";
}

namespace {

bool uses_pool(const MixedPlan& plan, std::size_t pool) {
  if (plan.strategy == MixedStrategy::cross_pool)
    return std::any_of(plan.cross_pool->segments.begin(), plan.cross_pool->segments.end(),
                       [&](const PipelineSegment& s) { return s.pool == pool; });
  return std::any_of(plan.pools.begin(), plan.pools.end(), [&](const PoolAssignment& a) { return a.pool == pool; });
}

}  // namespace

double mixed_plan_time_s(const ModelSpec& model, const MixedCluster& cluster, const Workload& workload,
                         const MixedPlan& plan) {
  cluster.validate();
  auto require_pool = [&](std::size_t pool) {
    if (pool >= cluster.pools.size())
      throw Error("cluster.pools", "the plan uses pool " + std::to_string(pool) + " of a cluster with " +
                                       std::to_string(cluster.pools.size()),
                  "the cluster the plan was made for");
  };
  if (plan.strategy == MixedStrategy::cross_pool) {
    for (const auto& s : plan.cross_pool->segments) require_pool(s.pool);
    validate_cross_pool_plan(*plan.cross_pool, model, cluster, workload);
    const CrossPoolEstimate e = estimate_cross_pool(model, cluster, *plan.cross_pool, workload);
    return e.fits ? e.iteration_time_s : kInfinity;
  }
  if (plan.pools.empty()) return kInfinity;
  double slowest = 0;
  for (const auto& a : plan.pools) {
    require_pool(a.pool);
    const Cluster& pool = cluster.pools[a.pool];
    const Workload share{a.global_batch, workload.seq_len};
    validate_plan(a.plan.plan, model, pool, share);
    const Estimate e = estimate(model, pool, a.plan.plan, share);
    if (!e.fits) return kInfinity;
    slowest = std::max(slowest, e.iteration_time_s);
  }
  return slowest + cross_pool_sync_s(model, cluster, plan.pools.size());
}

namespace {

// The batch split over `members` in proportion to their speed: whole sequences, summing to the
// batch, and (quantum > 1) multiples of the quantum; the rounding's remainder goes to the largest.
std::vector<std::int64_t> proportional_shares(std::int64_t batch, const std::vector<std::size_t>& members,
                                              const std::vector<double>& rate, double total_rate, std::int64_t quantum) {
  std::vector<std::int64_t> share(members.size());
  std::int64_t assigned = 0;
  for (std::size_t i = 0; i < members.size(); ++i) {
    share[i] = static_cast<std::int64_t>(static_cast<double>(batch) * rate[members[i]] / total_rate);
    assigned += share[i];
  }
  share[static_cast<std::size_t>(std::max_element(share.begin(), share.end()) - share.begin())] += batch - assigned;
  if (quantum > 1) {
    assigned = 0;
    for (auto& b : share) {
      b = std::max(quantum, b / quantum * quantum);
      assigned += b;
    }
    share[static_cast<std::size_t>(std::max_element(share.begin(), share.end()) - share.begin())] += batch - assigned;
  }
  return share;
}

// Moves sequences off the slowest member, a fraction of its share at a time, while the step
// (the slowest member plus the sync) gets faster; returns that step time. time_of(i, b): member
// i's best time at batch b.
template <typename TimeOf>
double refine_shares(std::vector<std::int64_t>& share, std::int64_t quantum, double sync, const TimeOf& time_of) {
  auto step_time = [&](const std::vector<std::int64_t>& b) {
    double slowest = 0;
    for (std::size_t i = 0; i < b.size(); ++i) slowest = std::max(slowest, time_of(i, b[i]));
    return slowest + sync;
  };
  double current = step_time(share);
  for (int round = 0; round < kMaxRefinements; ++round) {
    std::size_t slow = 0;
    for (std::size_t i = 1; i < share.size(); ++i)
      if (time_of(i, share[i]) > time_of(slow, share[slow])) slow = i;
    const std::int64_t move = std::max(quantum, share[slow] / kMoveFraction / quantum * quantum);
    std::vector<std::int64_t> best_share = share;
    double best_step = current;
    for (std::size_t to = 0; to < share.size(); ++to) {
      if (to == slow || share[slow] - move < 1) continue;
      std::vector<std::int64_t> candidate = share;
      candidate[slow] -= move;
      candidate[to] += move;
      const double t = step_time(candidate);
      if (t < best_step) {
        best_step = t;
        best_share = candidate;
      }
    }
    if (best_step >= current) break;
    current = best_step;
    share = best_share;
  }
  return current;
}

}  // namespace

MixedPlan search_mixed_plans(const ModelSpec& model, const MixedCluster& cluster, const Workload& workload,
                             const PlanConstraints& constraints, const PlannerOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  cluster.validate();
  workload.validate();
  PlannerOptions inner = options;
  inner.top_k = 1;
  inner.progress = {};
  inner.reference.reset();
  const std::size_t k = cluster.pools.size();

  std::map<std::pair<std::size_t, std::int64_t>, std::optional<RankedPlan>> memo;
  auto best_for = [&](std::size_t pool, std::int64_t batch) -> const std::optional<RankedPlan>& {
    const auto key = std::make_pair(pool, batch);
    if (auto it = memo.find(key); it != memo.end()) return it->second;
    const PlanSearch s = search_plans(model, cluster.pools[pool], {batch, workload.seq_len}, constraints, inner);
    std::optional<RankedPlan> best;
    if (!s.plans.empty()) best = s.plans.front();
    return memo.emplace(key, best).first->second;
  };
  auto time_of = [&](std::size_t pool, std::int64_t batch) {
    if (batch < 1) return kInfinity;
    const auto& r = best_for(pool, batch);
    return r ? r->estimate.iteration_time_s : kInfinity;
  };

  MixedPlan result;
  result.best_single_time_s = 0;
  double best_time = kInfinity;
  // Single pools.
  for (std::size_t p = 0; p < k; ++p) {
    const double t = time_of(p, workload.global_batch);
    if (t < kInfinity && (result.best_single_time_s == 0 || t < result.best_single_time_s)) {
      result.best_single_time_s = t;
      result.best_single_pool = p;
      result.best_single = *best_for(p, workload.global_batch);
    }
    if (t < best_time) {
      best_time = t;
      result.pools = {{p, workload.global_batch, *best_for(p, workload.global_batch)}};
      result.sync_time_s = 0;
    }
  }
  // A pool's speed: sequences per second on the largest power-of-two fraction of the batch it fits.
  std::vector<double> rate(k, 0.0);
  for (std::size_t p = 0; p < k; ++p) {
    std::int64_t batch = workload.global_batch;
    for (int h = 0; h <= kMaxProbeHalvings && batch >= 1; ++h, batch /= 2) {
      const double t = time_of(p, batch);
      if (t < kInfinity) {
        rate[p] = static_cast<double>(batch) / t;
        break;
      }
    }
  }
  // Every subset of two or more pools that can all run something.
  for (unsigned mask = 1; mask < (1u << k); ++mask) {
    std::vector<std::size_t> members;
    for (std::size_t p = 0; p < k; ++p)
      if (mask & (1u << p)) members.push_back(p);
    if (members.size() < 2) continue;
    double total_rate = 0;
    for (auto p : members) total_rate += rate[p];
    if (std::any_of(members.begin(), members.end(), [&](std::size_t p) { return rate[p] <= 0; })) continue;
    const std::int64_t quantum =
        workload.global_batch % kShareQuantum == 0 &&
                workload.global_batch >= kShareQuantum * static_cast<std::int64_t>(members.size())
            ? kShareQuantum
            : 1;
    std::vector<std::int64_t> share = proportional_shares(workload.global_batch, members, rate, total_rate, quantum);
    const double sync = cross_pool_sync_s(model, cluster, members.size());
    const double current = refine_shares(share, quantum, sync, [&](std::size_t i, std::int64_t b) { return time_of(members[i], b); });
    if (current < best_time) {
      best_time = current;
      result.pools.clear();
      for (std::size_t i = 0; i < members.size(); ++i)
        result.pools.push_back({members[i], share[i], *best_for(members[i], share[i])});
      result.sync_time_s = sync;
    }
  }
  if (best_time < kInfinity) {
    result.replica_time_s = best_time;
    result.strategy = result.pools.size() > 1 ? MixedStrategy::whole_replicas : MixedStrategy::single_pool;
  } else {
    result.pools.clear();
  }
  // Only a pipeline faster than the whole-replica answer can change it: the search proves the
  // others slower by their lower bounds instead of simulating them (a 3-pool, 12,288-GPU search:
  // 51 s to seconds). A slower runner-up is therefore not reported; searching pipelines within
  // 1.25x of the answer too took 30 s on that cluster.
  const CrossPoolSearch cross =
      search_cross_pool_pipelines(model, cluster, workload, constraints, options.exhaustive, best_time);
  result.cross_pool_must_beat_s = options.exhaustive ? kInfinity : best_time;
  result.cross_pool_evaluated = cross.evaluated;
  result.cross_pool_simulated = cross.simulated;
  if (cross.best) {
    result.cross_pool = cross.best;
    result.cross_pool_estimate = cross.estimate;
    if (cross.estimate.iteration_time_s < best_time) {
      best_time = cross.estimate.iteration_time_s;
      result.strategy = MixedStrategy::cross_pool;
    }
  }
  if (best_time < kInfinity) {
    result.iteration_time_s = best_time;
    result.tokens_per_s = workload.tokens() / best_time;
    for (std::size_t p = 0; p < k; ++p)
      if (!uses_pool(result, p)) result.left_out.push_back(p);
  }
  result.search_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace tessera
