// The planner's search inside one shape (search_plans runs it on every thread, over the shapes
// of search/plan_space.h). Per shape: its base plan, expert-communication variants and
// micro-batches. Per layout (shape, precision, interleaving degree): its recompute options and
// valid micro-batches, then
//   prune  the layout when its time bound at the largest micro-batch cannot reach the best found;
//   fit    the largest micro-batch whose leanest plan fits in memory, by bisection;
//   cost   per micro-batch that fits, its time bound, then every variant the bounds leave;
//   rank   each costed plan that fits into the thread's best (SearchWorker), whose worst time all
//          threads share as the pruning threshold.
//
// Pruning that keeps the closed-form ranking exact (off with a reference, whose rank needs every
// feasible candidate, and with options.exhaustive; Planner.PrunedSearchEqualsExhaustiveSearch
// checks it against costing everything). It rests on properties of the cost model:
//   - memory grows with the micro-batch: per layout the leanest plans (full recompute, every
//     optimizer sharding with FP8 param gather where it can: more sharding is not always leaner)
//     are costed at the smallest micro-batch and bisected up to the largest where one fits;
//     larger micro-batches are not searched;
//   - recompute only adds time; the optimizer sharding and FP8 param gather change only the
//     data-parallel and optimizer terms added after the pipeline (FP8 param gather also skips
//     weight casts: never slower); the dispatcher's EP overlap changes the expert-parallel and
//     bubble terms. So the plan with recompute none (and under FP8 the FP8 param gather:
//     probe_sharding), the bound probe, gives the bounds below, and a bound above the
//     `rescored`-th best time found so far (by any worker) skips what it bounds.
// Eager PyTorch breaks the first property: with one micro-batch per step (no gradient
// accumulation) no gradient is alive when the loss's backward peaks, so a larger micro-batch can
// need less memory (cost/eager_pytorch_memory.h). Its search space is one shape: cost it all.
// ShapeSearch.BoundsAreNeverAboveTheTimesTheyBound checks the bounds against the cost model.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <vector>

#include "cost/estimate.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"
#include "search/plan_space.h"
#include "search/planner.h"

namespace tessera {

// Upper bound on searched_expert_comm's variants (a fixed array of their time bounds).
inline constexpr std::size_t kMaxExpertComms = 8;

// Bound of every plan at the probe's micro-batch (any recompute, sharding, FP8 param gather or EP
// overlap), taken as the minimum over the probes without EP overlap (the overlap hides
// expert-parallel time and leaves these terms as they are).
inline double micro_batch_bound_s(const TimeBreakdown& t) {
  return t.compute_s + t.tp_comm_s + t.cp_comm_s + t.pp_comm_s;
}
// The same without the pipeline's p2p: it also bounds every smaller micro-batch (compute, TP and
// CP fall as the micro-batch grows: larger GEMMs, fewer launches and messages per token; the p2p
// grows with it, since each micro-batch's activation crosses every boundary vpp times).
inline double smaller_micro_batches_bound_s(const TimeBreakdown& t) { return t.compute_s + t.tp_comm_s + t.cp_comm_s; }
// Bound of every plan of the probe's micro-batch and expert-communication variant: the sharding
// and FP8 param gather change only the data-parallel and optimizer terms, added after the pipeline.
inline double variant_bound_s(const Estimate& e) { return e.iteration_time_s - e.time.dp_comm_s - e.time.optimizer_s; }
// (A recompute-none plan's own time bounds its recompute options, on the premise that recompute
// only adds time; exposed data-parallel traffic can break it: DISABLED_RecomputeNeverShortensTheStep.)

// The bound probe's optimizer sharding and FP8 param gather: FP8 weights kept in FP8 skip the
// per-step cast (never slower), so under FP8 the probe gathers in FP8, which needs a sharded
// optimizer; the sharding itself only moves the terms the bounds leave out.
struct ProbeSharding {
  OptimizerSharding zero;
  bool fp8_param_gather;
};
ProbeSharding probe_sharding(const std::vector<OptimizerSharding>& zeros, bool fp8,
                             std::optional<bool> fp8_param_gather_pin);

// How many of indexes [0, n) `fits` holds for, when it holds for a prefix of them (memory grows
// with the micro-batch): tries 0, then bisects. n >= 1; `probed` gets bit i for each index tried.
template <typename Fits>
std::size_t fitting_prefix(std::size_t n, const Fits& fits, std::uint64_t& probed) {
  std::size_t lo = 0, hi = n;  // fits below lo, not from hi
  probed |= 1u;
  if (fits(std::size_t{0})) {
    lo = 1;
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      probed |= std::uint64_t{1} << mid;
      if (fits(mid)) lo = mid + 1;
      else hi = mid;
    }
  }
  return lo;
}

// What stays fixed over one search: the request (with its framework's constraints), the values
// tried inside each shape, and the switches derived from them.
struct SearchRequest {
  const ModelSpec& model;
  const Cluster& cluster;
  const Workload& workload;
  const PlanConstraints& fix;
  const PlannerOptions& options;
  const SearchChoices& choices;
  double limit_bytes = 0;   // per-GPU memory limit
  double reference_s = -1;  // the reference plan's time; -1 without one
  std::size_t rescored = 0;  // plans each worker keeps (its ranking's capacity)
  bool prune = true;        // time-bound and memory pruning (see above)
  bool torchtitan = false;  // candidates must be plans torchtitan runs
};

// A layout's valid micro-batches are bits of one word in the fit step (fitting_prefix).
inline constexpr std::size_t kMaxLayoutMicroBatches = 64;

// One recompute choice: the mode, its selective modules, its partial layer count.
struct RecomputeOption {
  Recompute recompute;
  unsigned modules;
  std::int64_t layers;
};

// One search thread's results: its ranking, counts and the pruning threshold it shares.
struct SearchWorker {
  std::vector<RankedPlan> best;  // top `capacity` by the closed form, no two with one estimate; a heap, worst first
  std::vector<FeasiblePoint> points;  // with options.record_feasible
  std::int64_t evaluated = 0, feasible = 0, faster_than_reference = 0, invalid = 0, aliases = 0;
  double min_peak = -1;
  Plan min_plan;
  std::size_t capacity = 0;
  // No candidate slower than this can be among the best `capacity`: the worst of this worker's
  // full ranking, or of any other worker's (each holds `capacity` plans at least that fast).
  std::atomic<double>* shared = nullptr;
  double threshold() const { return shared->load(std::memory_order_relaxed); }
  // Enters a costed, fitting candidate into the ranking. An entry with the identical estimate is
  // the same configuration to the cost model: the simpler of the two stays.
  void rank(const Plan& plan, const Estimate& estimate);

 private:
  void publish() const;
};

// One worker's search of shapes, one at a time (its lists are reused across shapes: after the
// first few the search allocates nothing). The steps, in the order they run, are the members.
class ShapeSearch {
 public:
  ShapeSearch(const SearchRequest& request, SearchWorker& worker);
  void search(const PlanShape& shape);

 private:
  // A layout's time bound at one micro-batch, with and without the pipeline's p2p.
  struct TimeBound;

  // The shape: its base plan (false: no plan of it is legal), expert-communication variants
  // (false: none left) and the micro-batches dividing a replica's batch.
  bool start_shape(const PlanShape& shape);
  bool list_expert_comms();
  void list_shape_micro_batches();
  // One layout (shape, precision, vpp): prune, fit, cost.
  void search_layout(Precision precision, std::int64_t vpp);
  void start_layout(Precision precision, std::int64_t vpp);
  void list_partial_recompute_layers();
  void list_recompute_options();
  void list_layout_micro_batches();
  TimeBound time_bound(std::int64_t micro_batch, bool with_overlap);
  bool leanest_fp8_param_gather(OptimizerSharding zero) const;
  bool leanest_fits_at(std::size_t micro_batch_index);
  // One micro-batch that fits: its bound, then every sharding, FP8 param gather, expert
  // communication and recompute the bounds leave.
  void search_micro_batch(std::int64_t micro_batch, unsigned leanest_costed);
  void search_variants(std::int64_t micro_batch, OptimizerSharding zero, bool fp8_param_gather, bool leanest_costed);
  // Costs one candidate into the counts and, when it fits, the ranking; false: not costed
  // (invalid under options.validate_every_candidate), `e` untouched.
  bool cost(const Plan& p, Estimate& e);
  bool overlap_allowed(const ExpertComm& comm, const RecomputeOption& option) const;

  const SearchRequest& r_;
  SearchWorker& wk_;
  // Reused across shapes and layouts.
  std::vector<ExpertComm> comms_;
  std::vector<std::int64_t> shape_mbs_, partial_layers_, valid_mbs_;
  std::vector<RecomputeOption> recompute_options_;
  // The shape being searched.
  PlanShape shape_{};
  Plan base_;
  std::int64_t per_replica_ = 0;  // sequences per data-parallel replica
  // The layout being searched: its candidate (fields set per cost), the probes' sharding and the
  // bound probes' times per expert-communication variant (-1: not costed), with and without the
  // data-parallel and optimizer terms.
  Plan p_;
  Estimate e_;
  std::int64_t vpp_ = 1;
  bool fp8_ = false;
  bool bounded_ = false;      // pruning by time with recompute none first (the bound of the rest)
  bool bound_probe_ = false;  // pruning by time bounds from recompute-none probes
  ProbeSharding probe_{};
  std::array<double, kMaxExpertComms> probe_time_s_{}, probe_rest_s_{};
  // The shardings' indices in choices.zeros, most sharding first: the order leanest_fits_at tries
  // them in (the most sharded is the leanest but at small dp, so the first usually settles it).
  std::vector<std::size_t> zeros_leanest_first_;
  // Per valid micro-batch of the layout: the shardings (bits by index in choices.zeros) whose
  // leanest plan leanest_fits_at costed, which search_variants then skips.
  std::array<unsigned, kMaxLayoutMicroBatches> leanest_costed_{};
};

}  // namespace tessera
