#include "search/planner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>
#include <tuple>

#include "core/divisors.h"
#include "core/error.h"
#include "core/units.h"

namespace tessera {

namespace {

// Largest micro-batch and interleaving degree searched: beyond these, activation memory grows
// with no time left to win (GEMMs are already large; the bubble is already divided by v).
constexpr std::int64_t kMaxMicroBatch = 32;
constexpr std::int64_t kMaxVpp = 32;
// Chunks up to this many layers try every partial-recompute count.
constexpr std::int64_t kAllPartialUpTo = 8;

template <typename T>
std::vector<T> pinned_or(const std::optional<T>& pin, std::vector<T> all) {
  if (pin) return {*pin};
  return all;
}

struct Shape {
  std::int64_t tp, pp, cp, ep;
};

// Ranking order: faster first, then smaller, then simpler.
bool better(const RankedPlan& a, const RankedPlan& b) {
  if (a.estimate.iteration_time_s != b.estimate.iteration_time_s)
    return a.estimate.iteration_time_s < b.estimate.iteration_time_s;
  if (a.estimate.peak_memory_bytes != b.estimate.peak_memory_bytes)
    return a.estimate.peak_memory_bytes < b.estimate.peak_memory_bytes;
  const Plan& x = a.plan;
  const Plan& y = b.plan;
  return std::tie(x.zero, x.recompute, x.recompute_layers, x.vpp, x.micro_batch, x.cp, x.ep, x.pp, x.tp) <
         std::tie(y.zero, y.recompute, y.recompute_layers, y.vpp, y.micro_batch, y.cp, y.ep, y.pp, y.tp);
}

}  // namespace

PlanSearch search_plans(const ModelSpec& model, const Cluster& cluster, const Workload& workload,
                        const PlanConstraints& fix, const PlannerOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  workload.validate();
  const std::int64_t gpus = cluster.gpus();
  const double limit_bytes =
      fix.max_memory_gib ? *fix.max_memory_gib * units::kGiB : cluster.gpu.usable_memory_gib * units::kGiB;
  if (fix.max_memory_gib && !(*fix.max_memory_gib > 0.0))
    throw Error("--max-memory-gib", "must be positive", "a number of GiB > 0");

  // Outer shapes (tp, pp, cp, ep), each checked for divisibility.
  std::vector<Shape> shapes;
  const std::int64_t tp_limit = fix.allow_cross_node_tp ? gpus : std::min<std::int64_t>(gpus, cluster.gpus_per_node);
  for (std::int64_t tp : pinned_or(fix.tp, divisors(model.heads, tp_limit))) {
    if (gpus % tp != 0 || model.heads % tp != 0) continue;
    if (model.attention != AttentionKind::mla && model.kv_heads % tp != 0 && tp % model.kv_heads != 0) continue;
    for (std::int64_t pp : pinned_or(fix.pp, divisors(gpus / tp, model.layers))) {
      if ((gpus / tp) % pp != 0) continue;
      for (std::int64_t cp : pinned_or(fix.cp, divisors(gpus / (tp * pp), workload.seq_len))) {
        if ((gpus / (tp * pp)) % cp != 0) continue;
        if (!context_parallel_supported(cp, workload.seq_len, fix.defaults.flash_attention)) continue;
        const std::int64_t dp = gpus / (tp * pp * cp);
        std::vector<std::int64_t> eps{1};
        if (model.is_moe()) eps = divisors(model.moe.experts, model.moe.experts);
        for (std::int64_t ep : pinned_or(fix.ep, eps)) {
          if (ep > 1 && (!model.is_moe() || model.moe.experts % ep != 0 || (dp * cp * tp) % ep != 0)) continue;
          shapes.push_back({tp, pp, cp, ep});
        }
      }
    }
  }

  const std::vector<Recompute> recomputes =
      pinned_or(fix.recompute, {Recompute::none, Recompute::selective, Recompute::full});
  const std::vector<OptimizerSharding> zeros = pinned_or(
      fix.zero, fix.zero_choices.empty()
                    ? std::vector<OptimizerSharding>{OptimizerSharding::none, OptimizerSharding::zero1, OptimizerSharding::zero3}
                    : fix.zero_choices);
  const Precision precision = fix.precision.value_or(Precision::bf16);

  double reference_s = -1;
  if (options.reference) {
    validate_plan(*options.reference, model, cluster, workload);
    reference_s = options.simulate_reference_rank
                      ? estimate(model, cluster, *options.reference, workload).iteration_time_s
                      : estimate_analytical(model, cluster, *options.reference, workload).iteration_time_s;
  }
  struct Worker {
    std::vector<RankedPlan> best;  // top `rescored` by the closed form
    std::int64_t evaluated = 0, feasible = 0, faster_than_reference = 0;
    double min_peak = -1;
    Plan min_plan;
  };
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const int threads = options.threads > 0 ? options.threads : static_cast<int>(hardware);
  std::vector<Worker> workers(static_cast<std::size_t>(threads));
  std::atomic<std::size_t> next{0};
  std::atomic<std::int64_t> done{0};

  const std::size_t rescored = std::max(options.rescored, options.top_k);
  auto work = [&](Worker& wk) {
    std::vector<std::int64_t> partial_layers;
    const auto worse = [](const RankedPlan& a, const RankedPlan& b) { return better(a, b); };
    for (std::size_t i = next++; i < shapes.size(); i = next++) {
      const Shape& sh = shapes[i];
      Plan base = fix.defaults;
      base.tp = sh.tp;
      base.pp = sh.pp;
      base.cp = sh.cp;
      base.ep = sh.ep;
      base.dp = gpus / (sh.tp * sh.pp * sh.cp);
      base.precision = precision;
      base.first_stage_layers = base.last_stage_layers = 0;
      base.sequence_parallel = fix.sequence_parallel.value_or(sh.tp > 1);
      if (base.sequence_parallel && sh.tp == 1) continue;
      if (workload.global_batch % base.dp != 0) continue;
      const std::int64_t per_replica = workload.global_batch / base.dp;
      std::vector<std::int64_t> vpps{1};
      if (sh.pp > 1)
        for (std::int64_t v = 2; v <= kMaxVpp && sh.pp * v <= model.layers; ++v) vpps.push_back(v);
      for (std::int64_t mb : pinned_or(fix.micro_batch, divisors(per_replica, kMaxMicroBatch))) {
        if (per_replica % mb != 0) continue;
        const std::int64_t m = per_replica / mb;
        for (std::int64_t v : pinned_or(fix.vpp, vpps)) {
          if (v > 1 && (sh.pp == 1 || m % sh.pp != 0 || sh.pp * v > model.layers)) continue;
          // Full recompute of only the first N layers of each chunk: N over 1..chunk-1 for short
          // chunks, else powers of two and the half and three-quarter marks (the memory / time
          // trade-off is linear in N, so these bracket the best N within a few layers).
          const std::int64_t chunk = (model.layers + sh.pp * v - 1) / (sh.pp * v);
          partial_layers.clear();
          partial_layers.push_back(fix.recompute_layers.value_or(0));
          if (!fix.recompute_layers && (!fix.recompute || *fix.recompute == Recompute::full)) {
            for (std::int64_t n = 1; n < chunk; n = chunk <= kAllPartialUpTo ? n + 1 : n * 2) partial_layers.push_back(n);
            if (chunk > kAllPartialUpTo) {
              partial_layers.push_back(chunk / 2);
              partial_layers.push_back(3 * chunk / 4);
            }
          }
          for (Recompute rc : recomputes) {
           for (std::int64_t n : partial_layers) {
            if (n > 0 && rc != Recompute::full) continue;
            for (OptimizerSharding z : zeros) {
              Plan p = base;
              p.micro_batch = mb;
              p.vpp = v;
              p.recompute = rc;
              p.recompute_layers = n;
              p.zero = z;
              try {
                validate_plan(p, model, cluster, workload);
              } catch (const Error&) {
                continue;  // a rule the enumeration did not pre-check
              }
              const Estimate e = estimate_analytical(model, cluster, p, workload);
              ++wk.evaluated;
              if (wk.min_peak < 0 || e.peak_memory_bytes < wk.min_peak) {
                wk.min_peak = e.peak_memory_bytes;
                wk.min_plan = p;
              }
              if (e.peak_memory_bytes > limit_bytes) continue;
              ++wk.feasible;
              if (options.simulate_reference_rank && reference_s > 0) {
                if (estimate(model, cluster, p, workload).iteration_time_s < reference_s) ++wk.faster_than_reference;
              } else if (e.iteration_time_s < reference_s) {
                ++wk.faster_than_reference;
              }
              if (wk.best.size() < rescored) {
                wk.best.push_back({p, e});
                std::push_heap(wk.best.begin(), wk.best.end(), worse);
              } else if (RankedPlan candidate{p, e}; better(candidate, wk.best.front())) {
                std::pop_heap(wk.best.begin(), wk.best.end(), worse);
                wk.best.back() = std::move(candidate);
                std::push_heap(wk.best.begin(), wk.best.end(), worse);
              }
            }
           }
          }
        }
      }
      const std::int64_t finished = ++done;
      if (options.progress) options.progress(finished, static_cast<std::int64_t>(shapes.size()));
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, std::ref(workers[static_cast<std::size_t>(t)]));
  work(workers[0]);
  for (auto& th : pool) th.join();

  PlanSearch result;
  result.reference_rank = options.reference ? 1 : 0;
  std::vector<RankedPlan> merged;
  for (auto& wk : workers) {
    result.evaluated += wk.evaluated;
    result.feasible += wk.feasible;
    result.reference_rank += wk.faster_than_reference;
    if (wk.min_peak >= 0 && (result.min_peak_memory_bytes == 0 || wk.min_peak < result.min_peak_memory_bytes)) {
      result.min_peak_memory_bytes = wk.min_peak;
      result.min_memory_plan = wk.min_plan;
    }
    merged.insert(merged.end(), wk.best.begin(), wk.best.end());
  }
  std::sort(merged.begin(), merged.end(), better);
  if (merged.size() > rescored) merged.resize(rescored);
  // Re-score with the simulated pipeline: the times `tessera estimate` prints.
  for (auto& r : merged) r.estimate = estimate(model, cluster, r.plan, workload);
  std::sort(merged.begin(), merged.end(), better);
  if (merged.size() > options.top_k) merged.resize(options.top_k);
  result.plans = std::move(merged);
  result.search_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace tessera
