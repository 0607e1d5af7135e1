#include "search/planner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <thread>

#include "core/error.h"
#include "core/units.h"
#include "search/framework_support.h"
#include "search/plan_ranking.h"
#include "search/plan_space.h"
#include "search/shape_search.h"

namespace tessera {

namespace {

// Pins that contradict each other (validate_plan checks the rest on every plan).
void check_pins(const PlanConstraints& fix) {
  if (fix.recompute_modules && fix.recompute && *fix.recompute != Recompute::selective)
    throw Error("fix.recompute_modules", "only applies to selective recompute", "recompute=selective or unset");
  if (fix.delay_wgrad.value_or(false) && !fix.overlap_ep.value_or(true))
    throw Error("fix.delay_wgrad", "needs overlap_ep", "delay_wgrad=0, or overlap_ep=1");
}

// The reference plan's time (by the closed form, like every candidate, or simulated); -1 without one.
double reference_time_s(const ModelSpec& model, const Cluster& cluster, const Workload& workload,
                        const PlannerOptions& options) {
  if (!options.reference) return -1;
  validate_plan(*options.reference, model, cluster, workload);
  return options.simulate_reference_rank ? estimate(model, cluster, *options.reference, workload).iteration_time_s
                                         : estimate_analytical(model, cluster, *options.reference, workload).iteration_time_s;
}

// Pruning keeps the closed-form ranking exact (search/shape_search.h), but a reference's rank
// needs every feasible candidate, and eager PyTorch's memory does not grow with the micro-batch.
bool prunes(const PlanConstraints& fix, const PlannerOptions& options) {
  return !options.reference && !options.exhaustive && fix.defaults.framework != TrainingFramework::pytorch &&
         fix.defaults.framework != TrainingFramework::megatrain;
}

// Prune, fit, cost and rank every shape, on options.threads threads (0: every core), each taking
// the next shape left. The threads share the pruning threshold, so which plans each costs depends
// on the timing, but not the best `rescored` they hold between them.
std::vector<SearchWorker> search_shapes(const std::vector<PlanShape>& shapes, const SearchRequest& request) {
  const PlannerOptions& options = request.options;
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const int threads = options.threads > 0 ? options.threads : static_cast<int>(hardware);
  std::vector<SearchWorker> workers(static_cast<std::size_t>(threads));
  std::atomic<double> shared_threshold{std::numeric_limits<double>::infinity()};
  for (auto& wk : workers) {
    wk.capacity = request.rescored;
    wk.shared = &shared_threshold;
  }
  std::atomic<std::size_t> next{0};
  std::atomic<std::int64_t> done{0};
  const auto work = [&](SearchWorker& wk) {
    ShapeSearch search(request, wk);
    wk.best.reserve(request.rescored + 1);
    for (std::size_t i = next++; i < shapes.size(); i = next++) {
      search.search(shapes[i]);
      const std::int64_t finished = ++done;
      if (options.progress) options.progress(finished, static_cast<std::int64_t>(shapes.size()));
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, std::ref(workers[static_cast<std::size_t>(t)]));
  work(workers[0]);
  for (auto& th : pool) th.join();
  for (auto& wk : workers) wk.shared = nullptr;  // the threshold ends here
  return workers;
}

// The workers' counts summed and their rankings in one list (`merged`).
PlanSearch merged_workers(const std::vector<SearchWorker>& workers, const PlannerOptions& options,
                          const MemoryLimit& limit, std::vector<RankedPlan>& merged) {
  PlanSearch result;
  result.memory_limit_bytes = limit.limit_bytes;
  result.headroom_bytes = limit.headroom_bytes;
  result.reference_rank = options.reference ? 1 : 0;
  for (const auto& wk : workers) {
    result.evaluated += wk.evaluated;
    result.feasible += wk.feasible;
    result.reference_rank += wk.faster_than_reference;
    result.invalid += wk.invalid;
    result.aliases += wk.aliases;
    if (wk.min_peak >= 0 && (result.min_peak_memory_bytes == 0 || wk.min_peak < result.min_peak_memory_bytes)) {
      result.min_peak_memory_bytes = wk.min_peak;
      result.min_memory_plan = wk.min_plan;
    }
    merged.insert(merged.end(), wk.best.begin(), wk.best.end());
    result.feasible_points.insert(result.feasible_points.end(), wk.points.begin(), wk.points.end());
  }
  return result;
}

// The merged plans checked, the best `rescored` by the closed form re-scored with the simulated
// pipeline (the times `tessera estimate` prints). Counts what it drops into `result`.
void rescore(std::vector<RankedPlan>& plans, const SearchRequest& request, PlanSearch& result) {
  const ModelSpec& model = request.model;
  // The enumeration produces only valid plans (Planner.EveryCandidateIsValid checks every
  // candidate); the ranked ones are checked here, outside the hot loop, so nothing invalid is listed.
  // Keys the defaults set that the plan makes meaningless (reshard under zero1, ...) are reset.
  for (auto& r : plans) r.plan = canonical_plan(r.plan, model);
  if (!request.options.validate_every_candidate) {
    const auto before = plans.size();
    std::erase_if(plans, [&](const RankedPlan& r) { return !is_valid_plan(r.plan, model, request.cluster, request.workload); });
    result.invalid += static_cast<std::int64_t>(before - plans.size());
  }
  result.aliases += drop_aliases(plans);  // aliases found by different workers
  if (plans.size() > request.rescored) plans.resize(request.rescored);
  for (auto& r : plans) r.estimate = estimate(model, request.cluster, r.plan, request.workload);
}

// The re-scored plans ranked: aliases dropped, ties ordered, dominated variants dropped unless
// kept, the top_k listed. Counts what it drops into `result`.
void rank_rescored(std::vector<RankedPlan>& plans, const SearchRequest& request, PlanSearch& result) {
  result.aliases += drop_aliases(plans);
  order_ties(plans, request.cluster);
  if (!request.options.keep_tied_variants) result.aliases += drop_dominated_variants(plans, request.cluster);
  if (plans.size() > request.options.top_k) plans.resize(request.options.top_k);
}

}  // namespace

MemoryLimit memory_limit(const Cluster& cluster, const PlanConstraints& fix) {
  if (fix.max_memory_gib) {
    if (!(*fix.max_memory_gib > 0.0)) throw Error("--max-memory-gib", "must be positive", "a number of GiB > 0");
    return {*fix.max_memory_gib * units::kGiB, 0.0};
  }
  const double usable_bytes = cluster.gpu.usable_memory_gib * units::kGiB;
  const double headroom_bytes = kDefaultMemoryHeadroomFraction * usable_bytes;
  return {usable_bytes - headroom_bytes, headroom_bytes};
}

// Enumerate the shapes; on every thread prune, fit, cost and rank each (search/shape_search.h);
// merge the threads' rankings, re-score the best with the simulator and rank them.
PlanSearch search_plans(const ModelSpec& model, const Cluster& cluster, const Workload& workload,
                        const PlanConstraints& requested, const PlannerOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  const PlanConstraints fix = framework_constraints(model, requested);
  workload.validate();
  const MemoryLimit limit = memory_limit(cluster, fix);
  check_pins(fix);
  const std::vector<PlanShape> shapes = enumerate_shapes(model, cluster, workload, fix);
  const SearchChoices choices = search_choices(model, cluster, fix);
  const SearchRequest request{.model = model,
                              .cluster = cluster,
                              .workload = workload,
                              .fix = fix,
                              .options = options,
                              .choices = choices,
                              .limit_bytes = limit.limit_bytes,
                              .reference_s = reference_time_s(model, cluster, workload, options),
                              .rescored = std::max(options.rescored, options.top_k),
                              .prune = prunes(fix, options),
                              .torchtitan = fix.defaults.framework == TrainingFramework::torchtitan};
  const std::vector<SearchWorker> workers = search_shapes(shapes, request);
  std::vector<RankedPlan> plans;
  PlanSearch result = merged_workers(workers, options, limit, plans);
  rescore(plans, request, result);
  rank_rescored(plans, request, result);
  result.plans = std::move(plans);
  result.search_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace tessera
