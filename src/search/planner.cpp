#include "search/planner.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <limits>
#include <cmath>
#include <mutex>
#include <thread>
#include <tuple>

#include "core/divisors.h"
#include "core/error.h"
#include "core/units.h"
#include "search/framework_support.h"
#include "search/plan_ranking.h"
#include "search/plan_space.h"

namespace tessera {

namespace {

// Largest micro-batch and interleaving degree searched: beyond these, activation memory grows
// with no time left to win (GEMMs are already large; the bubble is already divided by v).
constexpr std::int64_t kMaxMicroBatch = 32;  // <= 64: micro-batch sets are 64-bit masks
constexpr std::int64_t kMaxVpp = 32;
// Chunks up to this many layers try every partial-recompute count.
constexpr std::int64_t kAllPartialUpTo = 8;
// Upper bound on searched_expert_comm's variants (a fixed array of their time bounds).
constexpr std::size_t kMaxExpertComms = 8;

template <typename T>
std::vector<T> pinned_or(const std::optional<T>& pin, std::vector<T> all) {
  if (pin) return {*pin};
  return all;
}

struct Shape {
  std::int64_t tp, pp, cp, ep, etp;
};

// One recompute choice: the mode, its selective modules, its partial layer count.
struct RecomputeOption {
  Recompute recompute;
  unsigned modules;
  std::int64_t layers;
};

bool is_valid(const Plan& p, const ModelSpec& model, const Cluster& cluster, const Workload& workload) {
  try {
    validate_plan(p, model, cluster, workload);
    return true;
  } catch (const Error&) {
    return false;
  }
}

// Outer shapes (tp, pp, cp, ep, etp), each checked for divisibility.
std::vector<Shape> enumerate_shapes(const ModelSpec& model, const Cluster& cluster, const Workload& workload,
                                    const PlanConstraints& fix) {
  const std::int64_t gpus = cluster.gpus();
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
          std::vector<std::int64_t> etps = searched_expert_tp(model, tp, cp, dp, ep);
          if (fix.etp) {
            // A pinned etp equal to tp is the default (0); a dense model has no expert layers.
            const std::int64_t e = *fix.etp == tp || !model.is_moe() ? 0 : *fix.etp;
            if (!model.is_moe() && *fix.etp > 1) continue;
            if (model.is_moe() && (dp * cp * tp) % ((e == 0 ? tp : e) * ep) != 0) continue;
            etps = {e};
          }
          for (std::int64_t etp : etps) shapes.push_back({tp, pp, cp, ep, etp});
        }
      }
    }
  }
  return shapes;
}

// The values the search tries for the knobs inside a shape, less what --fix pins.
struct SearchChoices {
  std::vector<Recompute> recomputes;
  std::vector<OptimizerSharding> zeros;
  std::vector<Precision> precisions;
  Fp8Recipe recipe = Fp8Recipe::tensorwise;
  std::optional<bool> overlap_tp_pin;
  std::vector<unsigned> module_sets;
};

SearchChoices search_choices(const ModelSpec& model, const Cluster& cluster, const PlanConstraints& fix) {
  SearchChoices c;
  c.recomputes =
      fix.recompute_modules ? std::vector<Recompute>{Recompute::selective}
                            : pinned_or(fix.recompute, fix.recompute_choices.empty()
                                                           ? std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full}
                                                           : fix.recompute_choices);
  // One GPU has nothing to shard over: optimizer sharding there only adds ZeRO-3's gathers.
  const std::int64_t gpus = cluster.gpus();
  c.zeros = pinned_or(
      fix.zero, gpus == 1 ? std::vector<OptimizerSharding>{OptimizerSharding::none}
                : fix.zero_choices.empty()
                    ? std::vector<OptimizerSharding>{OptimizerSharding::none, OptimizerSharding::zero1, OptimizerSharding::zero3}
                    : fix.zero_choices);
  c.precisions =
      pinned_or(fix.precision, fix.precision_choices.empty() ? std::vector<Precision>{Precision::bf16} : fix.precision_choices);
  c.recipe = fix.fp8_recipe.value_or(natural_fp8_recipe(cluster.gpu));
  // FP8 only where the GPU runs it (and its recipe); validate_plan's rule, checked once here.
  std::erase_if(c.precisions, [&](Precision p) {
    return p == Precision::fp8 && (cluster.gpu.fp8_tflops <= 0 || (c.recipe == Fp8Recipe::mxfp8 && !cluster.gpu.mxfp8));
  });
  // --fix overlap_tp (or a caller's defaults with it on) pins TP-communication overlap.
  c.overlap_tp_pin =
      fix.overlap_tp_comm ? fix.overlap_tp_comm : fix.defaults.overlap_tp_comm ? std::optional<bool>{true} : std::nullopt;
  c.module_sets =
      fix.recompute_modules ? std::vector<unsigned>{*fix.recompute_modules} : searched_recompute_modules(model);
  return c;
}

// One search thread's state: its ranking, counts and the pruning threshold it shares.
struct Worker {
  std::vector<RankedPlan> best;  // top `rescored` by the closed form, no two with one estimate
  std::vector<FeasiblePoint> points;  // with options.record_feasible
  std::int64_t evaluated = 0, feasible = 0, faster_than_reference = 0, invalid = 0, aliases = 0;
  double min_peak = -1;
  Plan min_plan;
  std::size_t capacity = 0;
  // No candidate slower than this can be among the best `capacity`: the worst of this worker's
  // full ranking, or of any other worker's (each holds `capacity` plans at least that fast).
  std::atomic<double>* shared = nullptr;
  double threshold() const { return shared->load(std::memory_order_relaxed); }
  void publish() const {
    if (best.size() < capacity) return;
    const double mine = best.front().estimate.iteration_time_s;
    double seen = shared->load(std::memory_order_relaxed);
    while (mine < seen && !shared->compare_exchange_weak(seen, mine, std::memory_order_relaxed)) {
    }
  }
};

// The workers' rankings merged: invalid and aliased plans dropped, the best `rescored` by the
// closed form re-scored with the simulated pipeline (the times `tessera estimate` prints), ties
// ordered, dominated variants dropped unless kept, the top_k listed.
PlanSearch merged_search(std::vector<Worker>& workers, const ModelSpec& model, const Cluster& cluster,
                         const Workload& workload, const PlannerOptions& options, const MemoryLimit& limit,
                         std::size_t rescored) {
  PlanSearch result;
  result.memory_limit_bytes = limit.limit_bytes;
  result.headroom_bytes = limit.headroom_bytes;
  result.reference_rank = options.reference ? 1 : 0;
  std::vector<RankedPlan> merged;
  for (auto& wk : workers) {
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
  // The enumeration produces only valid plans (Planner.EveryCandidateIsValid checks every
  // candidate); the ranked ones are checked here, outside the hot loop, so nothing invalid is listed.
  // Keys the defaults set that the plan makes meaningless (reshard under zero1, ...) are reset.
  for (auto& r : merged) r.plan = canonical_plan(r.plan, model);
  if (!options.validate_every_candidate) {
    const auto before = merged.size();
    std::erase_if(merged, [&](const RankedPlan& r) { return !is_valid(r.plan, model, cluster, workload); });
    result.invalid += static_cast<std::int64_t>(before - merged.size());
  }
  result.aliases += drop_aliases(merged);  // aliases found by different workers
  if (merged.size() > rescored) merged.resize(rescored);
  // Re-score with the simulated pipeline: the times `tessera estimate` prints.
  for (auto& r : merged) r.estimate = estimate(model, cluster, r.plan, workload);
  result.aliases += drop_aliases(merged);
  order_ties(merged, cluster);
  if (!options.keep_tied_variants) result.aliases += drop_dominated_variants(merged, cluster);
  if (merged.size() > options.top_k) merged.resize(options.top_k);
  result.plans = std::move(merged);
  return result;
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

PlanSearch search_plans(const ModelSpec& model, const Cluster& cluster, const Workload& workload,
                        const PlanConstraints& requested, const PlannerOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  const PlanConstraints fix = framework_constraints(model, requested);
  const bool torchtitan = fix.defaults.framework == TrainingFramework::torchtitan;
  workload.validate();
  const std::int64_t gpus = cluster.gpus();
  const MemoryLimit limit = memory_limit(cluster, fix);
  const double limit_bytes = limit.limit_bytes;
  if (fix.recompute_modules && fix.recompute && *fix.recompute != Recompute::selective)
    throw Error("fix.recompute_modules", "only applies to selective recompute", "recompute=selective or unset");
  if (fix.delay_wgrad.value_or(false) && !fix.overlap_ep.value_or(true))
    throw Error("fix.delay_wgrad", "needs overlap_ep", "delay_wgrad=0, or overlap_ep=1");

  const std::vector<Shape> shapes = enumerate_shapes(model, cluster, workload, fix);

  const SearchChoices choices = search_choices(model, cluster, fix);
  const std::vector<Recompute>& recomputes = choices.recomputes;
  const std::vector<OptimizerSharding>& zeros = choices.zeros;
  const std::vector<Precision>& precisions = choices.precisions;
  const Fp8Recipe recipe = choices.recipe;
  const std::optional<bool> overlap_tp_pin = choices.overlap_tp_pin;
  const std::vector<unsigned>& module_sets = choices.module_sets;

  double reference_s = -1;
  if (options.reference) {
    validate_plan(*options.reference, model, cluster, workload);
    reference_s = options.simulate_reference_rank
                      ? estimate(model, cluster, *options.reference, workload).iteration_time_s
                      : estimate_analytical(model, cluster, *options.reference, workload).iteration_time_s;
  }
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const int threads = options.threads > 0 ? options.threads : static_cast<int>(hardware);
  std::vector<Worker> workers(static_cast<std::size_t>(threads));
  std::atomic<std::size_t> next{0};
  std::atomic<std::int64_t> done{0};

  const std::size_t rescored = std::max(options.rescored, options.top_k);
  std::atomic<double> shared_threshold{std::numeric_limits<double>::infinity()};
  for (auto& wk : workers) {
    wk.capacity = rescored;
    wk.shared = &shared_threshold;
  }
  // Pruning that keeps the closed-form ranking exact (off with a reference, whose rank needs every
  // feasible candidate, and with options.exhaustive; Planner.PrunedSearchEqualsExhaustiveSearch
  // checks it against costing everything). It rests on properties of the cost model:
  //   - memory grows with the micro-batch: per (shape, precision, vpp) the leanest plan (full
  //     recompute, the most sharding, FP8 param gather) is costed at the smallest micro-batch and
  //     bisected up to the largest that fits; larger micro-batches are not searched;
  //   - recompute only adds time; the optimizer sharding and FP8 param gather change only the
  //     data-parallel and optimizer terms added after the pipeline (FP8 param gather also skips
  //     weight casts: never slower); the dispatcher's EP overlap changes the expert-parallel and
  //     bubble terms. So with recompute none, the most sharding and FP8 param gather:
  //       compute + TP + CP + PP (min over dispatchers)  bounds every plan of a micro-batch, and at
  //                                                       the largest micro-batch (bigger GEMMs,
  //                                                       fewer launches) every smaller one;
  //       time - DP - optimizer                           bounds every plan of that dispatcher variant;
  //       time                                            bounds the recompute options of one plan;
  //     a bound above the `rescored`-th best time found so far (by any worker) skips what it bounds.
  // Eager PyTorch breaks the first property: with one micro-batch per step (no gradient
  // accumulation) no gradient is alive when the loss's backward peaks, so a larger micro-batch can
  // need less memory (cost/eager_pytorch_memory.h). Its search space is one shape: cost it all.
  const bool prune = !options.reference && !options.exhaustive && fix.defaults.framework != TrainingFramework::pytorch;
  const auto search_shape = [&](Worker& wk, const Shape& sh, std::vector<std::int64_t>& partial_layers,
                                std::vector<RecomputeOption>& recompute_options, std::vector<ExpertComm>& comms,
                                std::vector<std::int64_t>& valid_mbs, std::vector<std::int64_t>& shape_mbs,
                                const auto& rank) {
    Plan base = fix.defaults;
    base.tp = sh.tp;
    base.pp = sh.pp;
    base.cp = sh.cp;
    base.ep = sh.ep;
    base.etp = sh.etp;
    base.dp = gpus / (sh.tp * sh.pp * sh.cp);
    base.first_stage_layers = base.last_stage_layers = 0;
    base.sequence_parallel = fix.sequence_parallel.value_or(sh.tp > 1);
    if ((base.sequence_parallel && sh.tp == 1) || workload.global_batch % base.dp != 0) return;
    // TP-communication overlap where legal (header: it dominates); pinned on, only there.
    const bool tp_overlap_legal = base.sequence_parallel && sh.tp > 1;
    if (overlap_tp_pin.value_or(false) && !tp_overlap_legal) return;
    base.overlap_tp_comm = overlap_tp_pin.value_or(tp_overlap_legal);
    // Expert communication variants of this shape, less the pinned-out ones.
    searched_expert_comm(model, sh.ep, comms);
    if (fix.dispatcher && model.is_moe() && sh.ep == 1) comms.front().dispatcher = *fix.dispatcher;
    std::erase_if(comms, [&](const ExpertComm& c) {
      return (fix.dispatcher && model.is_moe() && c.dispatcher != *fix.dispatcher) ||
             (fix.overlap_ep && c.overlap_ep != *fix.overlap_ep) || (fix.delay_wgrad && c.delay_wgrad != *fix.delay_wgrad);
    });
    if (comms.empty() || comms.size() > kMaxExpertComms) return;
    const std::int64_t per_replica = workload.global_batch / base.dp;
    shape_mbs.clear();
    for (std::int64_t mb = 1; mb <= kMaxMicroBatch; ++mb)
      if (fix.micro_batch ? mb == *fix.micro_batch : per_replica % mb == 0) shape_mbs.push_back(mb);
    if (fix.micro_batch && *fix.micro_batch > kMaxMicroBatch) shape_mbs.push_back(*fix.micro_batch);
    const std::int64_t max_vpp = sh.pp == 1 ? 1 : std::min(kMaxVpp, model.layers / sh.pp);
    const OptimizerSharding leanest_zero = *std::max_element(zeros.begin(), zeros.end());
    // Costs one candidate; returns its estimate (time < 0: not costed, invalid).
    const auto cost = [&](const Plan& p, Estimate& e) {
      if (options.validate_every_candidate && !is_valid(p, model, cluster, workload)) {
        ++wk.invalid;
        return false;
      }
      e = estimate_analytical(model, cluster, p, workload);
      ++wk.evaluated;
      // A plan the framework cannot run still bounds the plans around it (the probes), but is
      // never a candidate.
      if (torchtitan && !torchtitan_can_run(model, p)) return true;
      if (wk.min_peak < 0 || e.peak_memory_bytes < wk.min_peak) {
        wk.min_peak = e.peak_memory_bytes;
        wk.min_plan = p;
      }
      if (e.peak_memory_bytes > limit_bytes) return true;
      ++wk.feasible;
      if (options.record_feasible) wk.points.push_back({e.iteration_time_s, e.peak_memory_bytes});
      if (options.simulate_reference_rank && reference_s > 0) {
        if (estimate(model, cluster, p, workload).iteration_time_s < reference_s) ++wk.faster_than_reference;
      } else if (e.iteration_time_s < reference_s) {
        ++wk.faster_than_reference;
      }
      rank(p, e);
      return true;
    };
    const auto overlap_allowed = [&](const ExpertComm& c, const RecomputeOption& ro, std::int64_t v) {
      // Megatron's EP-overlap rules (validate_plan), checked here so nothing throws.
      return !c.overlap_ep || !(ro.recompute == Recompute::full || (ro.modules & kRecomputeMoe) ||
                                (sh.pp > 1 && v == 1) || model.mtp_layers > 1);
    };
    for (Precision precision : precisions) {
      const bool fp8 = precision == Precision::fp8;
      for (std::int64_t v = fix.vpp.value_or(1); v <= fix.vpp.value_or(max_vpp); ++v) {
        if (v > 1 && (sh.pp == 1 || sh.pp * v > model.layers)) continue;
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
        // Recompute none first (the time bound of the rest), the leanest (full, every layer) last.
        recompute_options.clear();
        for (Recompute rc : recomputes) {
          if (rc == Recompute::selective) {
            for (unsigned mods : module_sets) {
              // Transformer Engine's delayed scaling cannot recompute moe_act or layernorm
              // (transformer_config.py __post_init__, Megatron-LM d98e8a64).
              if (fp8 && recipe == Fp8Recipe::delayed && (mods & (kRecomputeMoeAct | kRecomputeLayernorm))) continue;
              recompute_options.push_back({rc, mods, 0});
            }
          } else {
            for (auto it = partial_layers.rbegin(); it != partial_layers.rend(); ++it)
              if (*it == 0 || rc == Recompute::full) recompute_options.push_back({rc, 0u, *it});
          }
        }
        if (recompute_options.empty()) continue;
        const bool bounded = prune && recompute_options.front().recompute == Recompute::none && recompute_options.size() > 1;
        const RecomputeOption& leanest = recompute_options.back();
        Plan p = base;
        p.vpp = v;
        p.precision = precision;
        p.fp8_recipe = fp8 ? recipe : Plan{}.fp8_recipe;
        Estimate e;
        const auto fits_at = [&](std::int64_t mb) {
          // The leanest plan of this (shape, precision, vpp) at micro-batch mb: does it fit?
          p.micro_batch = mb;
          p.recompute = leanest.recompute;
          p.recompute_modules = leanest.modules;
          p.recompute_layers = leanest.layers;
          p.zero = leanest_zero;
          p.fp8_param_gather = fix.fp8_param_gather.value_or(fp8 && leanest_zero != OptimizerSharding::none);
          if (p.fp8_param_gather && (!fp8 || leanest_zero == OptimizerSharding::none)) return false;
          bool fits = false;
          for (const ExpertComm& c : comms) {
            if (c.overlap_ep && !overlap_allowed(c, leanest, v)) continue;
            p.dispatcher = c.dispatcher;
            p.overlap_ep = c.overlap_ep;
            p.delay_wgrad = c.delay_wgrad;
            Estimate probe;
            if (cost(p, probe)) fits = fits || probe.peak_memory_bytes <= limit_bytes;
          }
          return fits;
        };
        std::array<double, kMaxExpertComms> probe_time_s{}, probe_rest_s{};
        // The probes' sharding and FP8 param gather: FP8 weights kept in FP8 skip the per-step
        // cast (never slower), so under FP8 the probe gathers in FP8, which needs a sharded
        // optimizer; the sharding itself only moves the terms the bound leaves out.
        const auto sharded_zero = std::find_if(zeros.begin(), zeros.end(),
                                               [](OptimizerSharding z) { return z != OptimizerSharding::none; });
        const bool probe_pg = fp8 && sharded_zero != zeros.end() && fix.fp8_param_gather.value_or(true);
        const OptimizerSharding probe_zero = probe_pg ? *sharded_zero : zeros.front();
        // Time bound of every plan at micro-batch mb: the optimizer sharding, the FP8 param
        // gather and the EP overlap change only the data-parallel, optimizer, expert-parallel
        // and bubble terms (the bubble through the stage times), and recompute only adds compute,
        // so compute + TP + CP + PP of the plan with recompute none and no overlap, per
        // dispatcher, bound them all from below. Those plans are candidates themselves (costed
        // and ranked here, skipped below).
        // Per variant, the same plan bounds every optimizer sharding and FP8 param gather (they
        // change only the data-parallel and optimizer terms, added after the pipeline):
        // probe_rest_s holds its time without them.
        // The variants without EP overlap first: the overlap hides expert-parallel time and
        // leaves compute + TP + CP + PP as they are, so their minimum is the bound, and the
        // overlap variants are costed only when it passes.
        // Returned with and without the pipeline's p2p (compute + TP + CP alone: see below).
        struct TimeBound {
          double with_p2p = std::numeric_limits<double>::infinity();
          double without_p2p = std::numeric_limits<double>::infinity();
        };
        const auto time_bound = [&](std::int64_t mb, bool with_overlap) {
          TimeBound bound;
          for (int pass = 0; pass < (with_overlap ? 2 : 1); ++pass) {
            if (pass == 1 && bound.with_p2p > wk.threshold()) break;
            for (std::size_t ci = 0; ci < comms.size(); ++ci) {
              const ExpertComm& c = comms[ci];
              if (c.overlap_ep != (pass == 1)) continue;
              probe_time_s[ci] = -1;
              probe_rest_s[ci] = std::numeric_limits<double>::infinity();
              if (c.overlap_ep && !overlap_allowed(c, recompute_options.front(), v)) continue;
              p.micro_batch = mb;
              p.recompute = Recompute::none;
              p.recompute_modules = 0;
              p.recompute_layers = 0;
              p.zero = probe_zero;
              p.fp8_param_gather = probe_pg;
              p.dispatcher = c.dispatcher;
              p.overlap_ep = c.overlap_ep;
              p.delay_wgrad = c.delay_wgrad;
              if (!cost(p, e)) continue;
              probe_time_s[ci] = e.iteration_time_s;
              probe_rest_s[ci] = e.iteration_time_s - e.time.dp_comm_s - e.time.optimizer_s;
              if (pass == 0) {
                const TimeBreakdown& t = e.time;
                bound.with_p2p = std::min(bound.with_p2p, t.compute_s + t.tp_comm_s + t.cp_comm_s + t.pp_comm_s);
                bound.without_p2p = std::min(bound.without_p2p, t.compute_s + t.tp_comm_s + t.cp_comm_s);
              }
            }
          }
          return bound;
        };
        valid_mbs.clear();
        for (std::int64_t mb : shape_mbs)
          if (per_replica % mb == 0 && (v == 1 || (per_replica / mb) % sh.pp == 0)) valid_mbs.push_back(mb);
        std::size_t mb_count = valid_mbs.size();
        if (mb_count == 0) continue;
        const bool bound_probe = prune && recompute_options.front().recompute == Recompute::none;
        // Compute + TP + CP fall as the micro-batch grows (larger GEMMs, fewer launches and
        // messages per token): at the largest micro-batch they bound every smaller one. The
        // pipeline's p2p does not: each micro-batch's activation crosses every boundary on the
        // way in and out (vpp times when interleaved), so it grows with the micro-batch (at vpp
        // 16 the larger micro-batch's p2p pruned plans 0.4% faster than the list's last).
        if (bound_probe && time_bound(valid_mbs[mb_count - 1], false).without_p2p > wk.threshold()) continue;
        std::uint64_t probed = 0;  // micro-batches whose leanest plans fits_at costed
        if (prune) {
          // The largest micro-batch whose leanest plan fits (activations grow with the
          // micro-batch), by bisection after trying the smallest.
          std::size_t lo = 0, hi = mb_count;  // fits below lo, not from hi
          probed |= 1u;
          if (fits_at(valid_mbs[0])) {
            lo = 1;
            while (lo < hi) {
              const std::size_t mid = (lo + hi) / 2;
              probed |= std::uint64_t{1} << mid;
              if (fits_at(valid_mbs[mid])) lo = mid + 1;
              else hi = mid;
            }
          }
          mb_count = lo;
        }
        for (std::size_t mi = 0; mi < mb_count; ++mi) {
          const std::int64_t mb = valid_mbs[mi];
          bool probe_ranked = false;
          if (bound_probe) {
            const double bound = time_bound(mb, true).with_p2p;
            probe_ranked = true;
            if (bound > wk.threshold()) continue;
          }
          const bool leanest_costed = (probed >> mi) & 1u;
          for (OptimizerSharding z : zeros) {
            // --fp8-param-gather needs the distributed optimizer or FSDP (arguments.py, d98e8a64).
            const bool sharded = z != OptimizerSharding::none;
            const bool pg_pin = fix.fp8_param_gather.value_or(false);
            if (pg_pin && (!fp8 || !sharded)) continue;
            const bool pg_last = fix.fp8_param_gather ? pg_pin : fp8 && sharded;
            for (bool pg = fix.fp8_param_gather ? pg_pin : false;; pg = true) {
              for (std::size_t ci = 0; ci < comms.size(); ++ci) {
                const ExpertComm& c = comms[ci];
                if (probe_ranked && probe_rest_s[ci] > wk.threshold()) continue;
                p.micro_batch = mb;
                p.zero = z;
                p.fp8_param_gather = pg;
                p.dispatcher = c.dispatcher;
                p.overlap_ep = c.overlap_ep;
                p.delay_wgrad = c.delay_wgrad;
                for (std::size_t k = 0; k < recompute_options.size(); ++k) {
                  const RecomputeOption& ro = recompute_options[k];
                  if (!overlap_allowed(c, ro, v)) continue;
                  p.recompute = ro.recompute;
                  p.recompute_modules = ro.modules;
                  p.recompute_layers = ro.layers;
                  if (leanest_costed && k + 1 == recompute_options.size() && z == leanest_zero &&
                      pg == fix.fp8_param_gather.value_or(fp8 && leanest_zero != OptimizerSharding::none))
                    continue;  // the probe costed it
                  if (k == 0 && probe_ranked && probe_time_s[ci] >= 0 && z == probe_zero && pg == probe_pg) {
                    if (bounded && probe_time_s[ci] > wk.threshold()) break;
                    continue;  // costed by the bound above
                  }
                  if (!cost(p, e)) continue;
                  if (k == 0 && bounded && e.iteration_time_s > wk.threshold()) break;
                }
              }
              if (pg == pg_last) break;
            }
          }
        }
      }
    }
  };
  auto work = [&](Worker& wk) {
    // Reused across shapes: after the first few shapes the loop below allocates nothing.
    std::vector<std::int64_t> partial_layers;
    std::vector<RecomputeOption> recompute_options;
    std::vector<ExpertComm> comms;
    std::vector<std::int64_t> valid_mbs, shape_mbs;
    wk.best.reserve(rescored + 1);
    const auto worse = [](const RankedPlan& a, const RankedPlan& b) { return ranked_before(a, b); };
    // Enters a costed, fitting candidate into the worker's ranking. An entry with the identical
    // estimate is the same configuration to the cost model: the simpler of the two stays.
    const auto rank = [&](const Plan& p, const Estimate& e) {
      const RankedPlan candidate{p, e};
      const bool full = wk.best.size() >= rescored;
      if (full && !ranked_before(candidate, wk.best.front())) return;
      for (auto& r : wk.best) {
        if (!same_estimate(r.estimate, e)) continue;
        ++wk.aliases;
        if (ranked_before(candidate, r)) {
          r.plan = p;
          std::make_heap(wk.best.begin(), wk.best.end(), worse);
        }
        return;
      }
      if (full) std::pop_heap(wk.best.begin(), wk.best.end(), worse), wk.best.pop_back();
      wk.best.push_back(candidate);
      std::push_heap(wk.best.begin(), wk.best.end(), worse);
      wk.publish();
    };
    for (std::size_t i = next++; i < shapes.size(); i = next++) {
      search_shape(wk, shapes[i], partial_layers, recompute_options, comms, valid_mbs, shape_mbs, rank);
      const std::int64_t finished = ++done;
      if (options.progress) options.progress(finished, static_cast<std::int64_t>(shapes.size()));
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, std::ref(workers[static_cast<std::size_t>(t)]));
  work(workers[0]);
  for (auto& th : pool) th.join();

  PlanSearch result = merged_search(workers, model, cluster, workload, options, limit, rescored);
  result.search_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace tessera
