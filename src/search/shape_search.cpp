#include "search/shape_search.h"

#include <algorithm>
#include <limits>

#include "core/error.h"
#include "cost/cost_model.h"
#include "cost/memory_verdict.h"
#include "search/framework_support.h"
#include "search/plan_ranking.h"

namespace tessera {

namespace {

// Largest micro-batch and interleaving degree searched: beyond these, activation memory grows
// with no time left to win (GEMMs are already large; the bubble is already divided by v).
constexpr std::int64_t kMaxMicroBatch = 32;  // <= 64: micro-batch sets are 64-bit masks
constexpr std::int64_t kMaxVpp = 32;
// Chunks up to this many layers try every partial-recompute count.
constexpr std::int64_t kAllPartialUpTo = 8;

void set_recompute(Plan& p, const RecomputeOption& option) {
  p.recompute = option.recompute;
  p.recompute_modules = option.modules;
  p.recompute_layers = option.layers;
}

void set_expert_comm(Plan& p, const ExpertComm& comm) {
  p.dispatcher = comm.dispatcher;
  p.overlap_ep = comm.overlap_ep;
  p.delay_wgrad = comm.delay_wgrad;
}

}  // namespace

ProbeSharding probe_sharding(const std::vector<OptimizerSharding>& zeros, bool fp8,
                             std::optional<bool> fp8_param_gather_pin) {
  const auto sharded =
      std::find_if(zeros.begin(), zeros.end(), [](OptimizerSharding z) { return z != OptimizerSharding::none; });
  const bool gather = fp8 && sharded != zeros.end() && fp8_param_gather_pin.value_or(true);
  return {gather ? *sharded : zeros.front(), gather};
}

void SearchWorker::publish() const {
  if (best.size() < capacity) return;
  const double mine = best.front().estimate.iteration_time_s;
  double seen = shared->load(std::memory_order_relaxed);
  while (mine < seen && !shared->compare_exchange_weak(seen, mine, std::memory_order_relaxed)) {
  }
}

void SearchWorker::rank(const Plan& p, const Estimate& e) {
  const auto worse = [](const RankedPlan& a, const RankedPlan& b) { return ranked_before(a, b); };
  const RankedPlan candidate{p, e};
  const bool full = best.size() >= capacity;
  if (full && !ranked_before(candidate, best.front())) return;
  for (auto& r : best) {
    if (!same_estimate(r.estimate, e)) continue;
    ++aliases;
    if (ranked_before(candidate, r)) {
      r.plan = p;
      std::make_heap(best.begin(), best.end(), worse);
    }
    return;
  }
  if (full) std::pop_heap(best.begin(), best.end(), worse), best.pop_back();
  best.push_back(candidate);
  std::push_heap(best.begin(), best.end(), worse);
  publish();
}

struct ShapeSearch::TimeBound {
  double with_p2p = kInfinity;     // micro_batch_bound_s
  double without_p2p = kInfinity;  // smaller_micro_batches_bound_s
};

ShapeSearch::ShapeSearch(const SearchRequest& request, SearchWorker& worker)
    : r_(request),
      wk_(worker) {
  for (std::size_t i = 0; i < request.choices.zeros.size(); ++i) zeros_leanest_first_.push_back(i);
  std::sort(zeros_leanest_first_.begin(), zeros_leanest_first_.end(),
            [&](std::size_t a, std::size_t b) { return request.choices.zeros[a] > request.choices.zeros[b]; });
  if (zeros_leanest_first_.size() > std::numeric_limits<unsigned>::digits)
    throw Error("fix.zero", "too many shardings to search", "at most " + std::to_string(std::numeric_limits<unsigned>::digits));
}

void ShapeSearch::search(const PlanShape& shape) {
  if (!start_shape(shape)) return;
  const std::int64_t max_vpp = shape.pp == 1 ? 1 : std::min(kMaxVpp, r_.model.layers / shape.pp);
  for (Precision precision : r_.choices.precisions)
    for (std::int64_t v = r_.fix.vpp.value_or(1); v <= r_.fix.vpp.value_or(max_vpp); ++v) search_layout(precision, v);
}

bool ShapeSearch::start_shape(const PlanShape& sh) {
  const PlanConstraints& fix = r_.fix;
  shape_ = sh;
  base_ = fix.defaults;
  base_.tp = sh.tp;
  base_.pp = sh.pp;
  base_.cp = sh.cp;
  base_.ep = sh.ep;
  base_.etp = sh.etp;
  base_.dp = r_.cluster.gpus() / (sh.tp * sh.pp * sh.cp);
  base_.first_stage_layers = base_.last_stage_layers = 0;
  base_.sequence_parallel = fix.sequence_parallel.value_or(sh.tp > 1);
  if ((base_.sequence_parallel && sh.tp == 1) || r_.workload.global_batch % base_.dp != 0) return false;
  // TP-communication overlap where legal (planner.h: it dominates); pinned on, only there.
  const bool tp_overlap_legal = base_.sequence_parallel && sh.tp > 1;
  const std::optional<bool> overlap_tp_pin = r_.choices.overlap_tp_pin;
  if (overlap_tp_pin.value_or(false) && !tp_overlap_legal) return false;
  base_.overlap_tp_comm = overlap_tp_pin.value_or(tp_overlap_legal);
  if (!list_expert_comms()) return false;
  per_replica_ = r_.workload.global_batch / base_.dp;
  list_shape_micro_batches();
  return true;
}

// The shape's expert-communication variants, less the pinned-out ones.
bool ShapeSearch::list_expert_comms() {
  const PlanConstraints& fix = r_.fix;
  const bool moe = r_.model.is_moe();
  searched_expert_comm(r_.model, shape_.ep, comms_);
  if (fix.dispatcher && moe && shape_.ep == 1) comms_.front().dispatcher = *fix.dispatcher;
  std::erase_if(comms_, [&](const ExpertComm& c) {
    return (fix.dispatcher && moe && c.dispatcher != *fix.dispatcher) ||
           (fix.overlap_ep && c.overlap_ep != *fix.overlap_ep) || (fix.delay_wgrad && c.delay_wgrad != *fix.delay_wgrad);
  });
  return !comms_.empty() && comms_.size() <= kMaxExpertComms;
}

void ShapeSearch::list_shape_micro_batches() {
  const std::optional<std::int64_t> pin = r_.fix.micro_batch;
  shape_mbs_.clear();
  for (std::int64_t mb = 1; mb <= kMaxMicroBatch; ++mb)
    if (pin ? mb == *pin : per_replica_ % mb == 0) shape_mbs_.push_back(mb);
  if (pin && *pin > kMaxMicroBatch) shape_mbs_.push_back(*pin);
}

void ShapeSearch::search_layout(Precision precision, std::int64_t v) {
  if (v > 1 && (shape_.pp == 1 || shape_.pp * v > r_.model.layers)) return;
  start_layout(precision, v);
  list_recompute_options();
  if (recompute_options_.empty()) return;
  list_layout_micro_batches();
  if (valid_mbs_.empty()) return;
  // With recompute none first, its plans bound the rest (shape_search.h).
  bound_probe_ = r_.prune && recompute_options_.front().recompute == Recompute::none;
  bounded_ = bound_probe_ && recompute_options_.size() > 1;
  // Prune: the bound at the largest micro-batch, less the p2p, bounds every micro-batch.
  if (bound_probe_ && time_bound(valid_mbs_.back(), false).without_p2p > wk_.threshold()) return;
  // Fit: the micro-batches whose leanest plan fits (without pruning, all of them).
  std::uint64_t probed = 0;  // micro-batches where leanest_fits_at ran (leanest_costed_ says what it costed)
  std::fill_n(leanest_costed_.begin(), valid_mbs_.size(), 0u);
  const auto fits = [&](std::size_t i) { return leanest_fits_at(i); };
  const std::size_t fitting = r_.prune ? fitting_prefix(valid_mbs_.size(), fits, probed) : valid_mbs_.size();
  // Cost.
  for (std::size_t mi = 0; mi < fitting; ++mi) search_micro_batch(valid_mbs_[mi], leanest_costed_[mi]);
}

void ShapeSearch::start_layout(Precision precision, std::int64_t v) {
  vpp_ = v;
  fp8_ = precision == Precision::fp8;
  p_ = base_;
  p_.vpp = v;
  p_.precision = precision;
  p_.fp8_recipe = fp8_ ? r_.choices.recipe : Plan{}.fp8_recipe;
  probe_ = probe_sharding(r_.choices.zeros, fp8_, r_.fix.fp8_param_gather);
  probe_time_s_ = {};
  probe_rest_s_ = {};
}

// Full recompute of only the first N layers of each chunk: N over 1..chunk-1 for short chunks,
// else powers of two and the half and three-quarter marks (the memory / time trade-off is linear
// in N, so these bracket the best N within a few layers).
void ShapeSearch::list_partial_recompute_layers() {
  const PlanConstraints& fix = r_.fix;
  const std::int64_t chunk = (r_.model.layers + shape_.pp * vpp_ - 1) / (shape_.pp * vpp_);
  partial_layers_.clear();
  partial_layers_.push_back(fix.recompute_layers.value_or(0));
  if (fix.recompute_layers || (fix.recompute && *fix.recompute != Recompute::full)) return;
  for (std::int64_t n = 1; n < chunk; n = chunk <= kAllPartialUpTo ? n + 1 : n * 2) partial_layers_.push_back(n);
  if (chunk > kAllPartialUpTo) {
    partial_layers_.push_back(chunk / 2);
    partial_layers_.push_back(3 * chunk / 4);
  }
}

// Recompute none first (the time bound of the rest), the leanest (full, every layer) last.
void ShapeSearch::list_recompute_options() {
  list_partial_recompute_layers();
  recompute_options_.clear();
  for (Recompute rc : r_.choices.recomputes) {
    if (rc != Recompute::selective) {
      for (auto it = partial_layers_.rbegin(); it != partial_layers_.rend(); ++it)
        if (*it == 0 || rc == Recompute::full) recompute_options_.push_back({rc, 0u, *it});
      continue;
    }
    for (unsigned mods : r_.choices.module_sets) {
      // Transformer Engine's delayed scaling cannot recompute moe_act or layernorm
      // (transformer_config.py __post_init__, Megatron-LM d98e8a64).
      if (fp8_ && r_.choices.recipe == Fp8Recipe::delayed && (mods & (kRecomputeMoeAct | kRecomputeLayernorm))) continue;
      recompute_options_.push_back({rc, mods, 0});
    }
  }
}

// The shape's micro-batches that split a replica's batch into whole rounds of the interleaved
// schedule (Megatron: the micro-batch count a multiple of pp when vpp > 1).
void ShapeSearch::list_layout_micro_batches() {
  valid_mbs_.clear();
  for (std::int64_t mb : shape_mbs_)
    if (per_replica_ % mb == 0 && (vpp_ == 1 || (per_replica_ / mb) % shape_.pp == 0)) valid_mbs_.push_back(mb);
}

// Costs the bound probes of micro-batch mb (recompute none, the probe's sharding), one per
// expert-communication variant. Those without EP overlap first: their minimum is the bound, and
// the variants with overlap are costed only when it passes. The probes are candidates themselves
// (costed and ranked here, skipped by search_variants); their times go to probe_time_s_ and,
// less the data-parallel and optimizer terms, probe_rest_s_.
ShapeSearch::TimeBound ShapeSearch::time_bound(std::int64_t mb, bool with_overlap) {
  TimeBound bound;
  for (int pass = 0; pass < (with_overlap ? 2 : 1); ++pass) {
    if (pass == 1 && bound.with_p2p > wk_.threshold()) break;
    for (std::size_t ci = 0; ci < comms_.size(); ++ci) {
      const ExpertComm& c = comms_[ci];
      if (c.overlap_ep != (pass == 1)) continue;
      probe_time_s_[ci] = -1;
      probe_rest_s_[ci] = kInfinity;
      if (c.overlap_ep && !overlap_allowed(c, recompute_options_.front())) continue;
      p_.micro_batch = mb;
      set_recompute(p_, {Recompute::none, 0u, 0});
      p_.zero = probe_.zero;
      p_.fp8_param_gather = probe_.fp8_param_gather;
      set_expert_comm(p_, c);
      if (!cost(p_, e_)) continue;
      probe_time_s_[ci] = e_.iteration_time_s;
      probe_rest_s_[ci] = variant_bound_s(e_);
      if (pass == 0) {
        bound.with_p2p = std::min(bound.with_p2p, micro_batch_bound_s(e_.time));
        bound.without_p2p = std::min(bound.without_p2p, smaller_micro_batches_bound_s(e_.time));
      }
    }
  }
  return bound;
}

// The FP8 param gather of sharding z's leanest plan: on wherever it can be.
bool ShapeSearch::leanest_fp8_param_gather(OptimizerSharding z) const {
  return r_.fix.fp8_param_gather.value_or(fp8_ && z != OptimizerSharding::none);
}

// Does a leanest plan of the layout at valid micro-batch mi fit: full recompute, any optimizer
// sharding with its leanest FP8 param gather, any expert-communication variant? Shardings are
// tried most sharded first, until one fits: more sharding is not always leaner (ZeRO-3's gather
// buffers outweigh its shards at small dp; on one GPU it shards nothing), so a layout is given up
// only when none fits. Each plan tried is costed, so it is a candidate too.
bool ShapeSearch::leanest_fits_at(std::size_t mi) {
  const RecomputeOption& leanest = recompute_options_.back();
  p_.micro_batch = valid_mbs_[mi];
  set_recompute(p_, leanest);
  for (std::size_t zi : zeros_leanest_first_) {
    const OptimizerSharding z = r_.choices.zeros[zi];
    p_.zero = z;
    p_.fp8_param_gather = leanest_fp8_param_gather(z);
    if (p_.fp8_param_gather && (!fp8_ || z == OptimizerSharding::none)) continue;
    leanest_costed_[mi] |= 1u << zi;
    bool fits = false;
    for (const ExpertComm& c : comms_) {
      if (c.overlap_ep && !overlap_allowed(c, leanest)) continue;
      set_expert_comm(p_, c);
      Estimate probe;
      if (cost(p_, probe)) fits = fits || probe.peak_memory_bytes <= r_.limit_bytes;
    }
    if (fits) return true;
  }
  return false;
}

void ShapeSearch::search_micro_batch(std::int64_t mb, unsigned leanest_costed) {
  // With bound probes, this micro-batch's are costed here (search_variants reads their times).
  if (bound_probe_ && time_bound(mb, true).with_p2p > wk_.threshold()) return;
  const std::optional<bool> pg_pin = r_.fix.fp8_param_gather;
  for (std::size_t zi = 0; zi < r_.choices.zeros.size(); ++zi) {
    const OptimizerSharding z = r_.choices.zeros[zi];
    // --fp8-param-gather needs the distributed optimizer or FSDP (arguments.py, d98e8a64).
    const bool sharded = z != OptimizerSharding::none;
    const bool pinned_on = pg_pin.value_or(false);
    if (pinned_on && (!fp8_ || !sharded)) continue;
    const bool pg_last = pg_pin ? pinned_on : fp8_ && sharded;
    for (bool pg = pg_pin ? pinned_on : false;; pg = true) {
      search_variants(mb, z, pg, (leanest_costed >> zi) & 1u);
      if (pg == pg_last) break;
    }
  }
}

// Every expert-communication variant and recompute option of one micro-batch, sharding and FP8
// param gather, less what the bounds prune and what the probes already costed.
void ShapeSearch::search_variants(std::int64_t mb, OptimizerSharding z, bool pg, bool leanest_costed) {
  const bool leanest_sharding = pg == leanest_fp8_param_gather(z);
  const bool as_probe = z == probe_.zero && pg == probe_.fp8_param_gather;
  const std::size_t leanest = recompute_options_.size() - 1;
  for (std::size_t ci = 0; ci < comms_.size(); ++ci) {
    const ExpertComm& c = comms_[ci];
    if (bound_probe_ && probe_rest_s_[ci] > wk_.threshold()) continue;
    p_.micro_batch = mb;
    p_.zero = z;
    p_.fp8_param_gather = pg;
    set_expert_comm(p_, c);
    for (std::size_t k = 0; k < recompute_options_.size(); ++k) {
      const RecomputeOption& ro = recompute_options_[k];
      if (!overlap_allowed(c, ro)) continue;
      set_recompute(p_, ro);
      if (leanest_costed && k == leanest && leanest_sharding) continue;  // leanest_fits_at costed it
      if (k == 0 && bound_probe_ && probe_time_s_[ci] >= 0 && as_probe) {
        if (bounded_ && probe_time_s_[ci] > wk_.threshold()) break;
        continue;  // time_bound costed it
      }
      if (!cost(p_, e_)) continue;
      if (k == 0 && bounded_ && e_.iteration_time_s > wk_.threshold()) break;
    }
  }
}

bool ShapeSearch::cost(const Plan& p, Estimate& e) {
  const PlannerOptions& options = r_.options;
  if (options.validate_every_candidate && !is_valid_plan(p, r_.model, r_.cluster, r_.workload)) {
    ++wk_.invalid;
    return false;
  }
  e = estimate_analytical(r_.model, r_.cluster, p, r_.workload);
  ++wk_.evaluated;
  // A plan the framework cannot run still bounds the plans around it (the probes), but is never
  // a candidate.
  if (r_.torchtitan && !torchtitan_can_run(r_.model, p)) return true;
  // A plan fits the GPU's limit (headroom and --max-memory-gib included) and, where it offloads,
  // the node's host memory and NVMe; the leanest is the one a larger GPU would let fit.
  if (!offloaded_state_fits(e)) return true;
  if (wk_.min_peak < 0 || e.peak_memory_bytes < wk_.min_peak) {
    wk_.min_peak = e.peak_memory_bytes;
    wk_.min_plan = p;
  }
  if (e.peak_memory_bytes > r_.limit_bytes) return true;
  ++wk_.feasible;
  if (options.record_feasible) wk_.points.push_back({e.iteration_time_s, e.peak_memory_bytes});
  if (options.simulate_reference_rank && r_.reference_s > 0) {
    if (estimate(r_.model, r_.cluster, p, r_.workload).iteration_time_s < r_.reference_s) ++wk_.faster_than_reference;
  } else if (e.iteration_time_s < r_.reference_s) {
    ++wk_.faster_than_reference;
  }
  wk_.rank(p, e);
  return true;
}

// Megatron's EP-overlap rules (validate_plan), checked here so nothing throws.
bool ShapeSearch::overlap_allowed(const ExpertComm& c, const RecomputeOption& option) const {
  return !c.overlap_ep || !(option.recompute == Recompute::full || (option.modules & kRecomputeMoe) ||
                            (shape_.pp > 1 && vpp_ == 1) || r_.model.mtp_layers > 1);
}

}  // namespace tessera
