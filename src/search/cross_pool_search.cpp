#include "search/cross_pool_search.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <vector>

#include "core/units.h"
#include "search/plan_space.h"

namespace tessera {

namespace {

// Micro-batch sizes searched (the homogeneous planner's range for long sequences).
constexpr std::int64_t kMicroBatches[] = {1, 2, 4, 8};
// Optimizer shardings searched: the plain optimizer and Megatron's distributed optimizer
// (ZeRO-2 shards the same state as ZeRO-1 at pp > 1 in Megatron-Core, and ZeRO-3 is left out).
constexpr OptimizerSharding kShardings[] = {OptimizerSharding::none, OptimizerSharding::zero1};
constexpr Recompute kRecomputes[] = {Recompute::none, Recompute::selective, Recompute::full};

struct Space {
  std::vector<std::int64_t> micro_batches;
  std::vector<Recompute> recomputes;
  std::vector<OptimizerSharding> shardings;
  bool empty = false;
};

Space space_of(const PlanConstraints& fix) {
  Space s;
  for (auto mb : kMicroBatches)
    if (!fix.micro_batch || *fix.micro_batch == mb) s.micro_batches.push_back(mb);
  if (fix.micro_batch && s.micro_batches.empty()) s.micro_batches.push_back(*fix.micro_batch);
  for (auto r : kRecomputes)
    if (!fix.recompute || *fix.recompute == r) s.recomputes.push_back(r);
  for (auto z : kShardings)
    if (!fix.zero || *fix.zero == z) s.shardings.push_back(z);
  if (fix.zero && *fix.zero == OptimizerSharding::zero2) s.shardings.push_back(OptimizerSharding::zero2);
  s.empty = (fix.cp && *fix.cp != 1) || (fix.ep && *fix.ep != 1) || (fix.vpp && *fix.vpp != 1) ||
            s.shardings.empty() ||
            s.recomputes.empty() || fix.recompute_layers.value_or(0) != 0 || fix.recompute_modules.has_value();
  return s;
}

// Every ordered sequence of 2 to kMaxCrossPoolSegments distinct pools.
void pool_orders(std::size_t k, std::vector<std::size_t>& prefix, std::vector<std::vector<std::size_t>>& out) {
  if (prefix.size() >= 2) out.push_back(prefix);
  if (prefix.size() == std::min(k, kMaxCrossPoolSegments)) return;
  for (std::size_t p = 0; p < k; ++p) {
    if (std::find(prefix.begin(), prefix.end(), p) != prefix.end()) continue;
    prefix.push_back(p);
    pool_orders(k, prefix, out);
    prefix.pop_back();
  }
}

bool tp_allowed(const ModelSpec& model, const Cluster& pool, std::int64_t tp) {
  return pool.gpus_per_node % tp == 0 && model.heads % tp == 0 &&
         (model.attention == AttentionKind::mla || model.kv_heads % tp == 0 || tp % model.kv_heads == 0);
}

// Relative gap at which a stage's time counts as affine in its layers (rounding of sums only).
constexpr double kAffineTolerance = 1e-9;

// One point of the space but the layer split: its segments' costers, limits and p2p, and the
// per-stage costs of each (segment, layers, embedding, head) met so far.
class Configuration {
 public:
  Configuration(const ModelSpec& model, const MixedCluster& cluster, const Workload& workload,
                const PlanConstraints& fix, const CrossPoolPlan& plan)
      : plan_(plan), dense_(!model.is_moe()) {
    const std::int64_t total = plan.stages();
    inputs_.microbatches = plan.base.microbatches(workload);
    inputs_.overlap_grad_reduce = plan.base.overlap_grad_reduce;
    const double boundary = cross_pool_boundary_s(model, cluster, plan.base, workload);
    for (const auto& seg : plan.segments) {
      const Cluster& pool = cluster.pools[seg.pool];
      const Plan sp = segment_plan(plan, seg);
      costers_.emplace_back(model, pool, sp, workload);
      limits_.push_back(memory_limit(pool, fix).limit_bytes);
      for (std::int64_t i = 0; i < seg.stages; ++i) {
        const bool last = static_cast<std::int64_t>(inputs_.p2p_s.size()) == total - 1;
        inputs_.p2p_s.push_back(last ? 0.0 : i == seg.stages - 1 ? boundary
                                                                 : within_pool_boundary_s(model, pool, sp, workload, i));
      }
    }
    inputs_.stages.resize(static_cast<std::size_t>(total));
    const std::size_t keys = static_cast<std::size_t>(model.layers + 1) * 4;
    memo_.assign(plan.segments.size(), std::vector<StageSliceCost>(dense_ ? keys : 0));
    known_.assign(plan.segments.size(), std::vector<char>(dense_ ? keys : 0, 0));
  }

  // Fills the stage costs for `layers` (one per segment); returns the lower bound.
  double bound(const std::vector<std::int64_t>& layers) {
    for_each_stage(layers, [&](std::size_t g, const StageSlice& slice, std::int64_t stage) {
      inputs_.stages[static_cast<std::size_t>(stage)] = stage_cost(g, slice);
      return true;
    });
    return cross_pool_lower_bound_s(inputs_);
  }

  // Whether every stage of `layers` fits its GPU's limit.
  bool fits(const std::vector<std::int64_t>& layers) const {
    return for_each_stage(layers, [&](std::size_t g, const StageSlice& slice, std::int64_t) {
      return costers_[g].memory_bytes(slice) <= limits_[g];
    });
  }

  double simulate() { return simulate_cross_pool(inputs_, simulator_, costs_); }

  // What the busiest stage of each segment costs per layer it holds, where that is a valid lower
  // bound: a stage's forward + backward affine in its layers with a non-negative fixed part,
  // a + b l >= b l (a dense model: identical layers), so a segment of n stages holding l layers has
  // a stage of at least b l / n. Empty where that shape does not hold.
  std::vector<double> per_layer_busy_s(std::int64_t total_layers) {
    std::vector<double> out;
    if (!dense_) return out;
    const std::int64_t most = total_layers - static_cast<std::int64_t>(plan_.segments.size()) + 1;
    for (std::size_t g = 0; g < plan_.segments.size(); ++g) {
      const auto busy = [&](std::int64_t layers) {
        StageSlice slice;
        slice.layers = layers;
        const StageSliceCost& c = stage_cost(g, slice);
        return c.forward_s + c.backward_s;
      };
      const double one = busy(1), two = busy(2), far = busy(most);
      const double per_layer = two - one, fixed = one - per_layer;
      const double affine_far = fixed + per_layer * static_cast<double>(most);
      if (!(per_layer > 0) || fixed < 0 || std::abs(far - affine_far) > kAffineTolerance * far) return {};
      out.push_back(per_layer / static_cast<double>(plan_.segments[g].stages));
    }
    return out;
  }

  // The most layers each segment may hold in a split whose bound() could be below best_s: with m
  // micro-batches, bound >= m * (b / n) * l (the tail and the embedding / head only add), so l >
  // best_s / (m b / n) cannot win. No cap (total_layers) where per_layer_busy_s has no bound.
  std::vector<std::int64_t> layer_caps(std::int64_t total_layers, double best_s) {
    std::vector<std::int64_t> caps(plan_.segments.size(), total_layers);
    if (!std::isfinite(best_s)) return caps;
    const std::vector<double> per_layer = per_layer_busy_s(total_layers);
    if (per_layer.empty()) return caps;
    const double m = static_cast<double>(inputs_.microbatches);
    for (std::size_t g = 0; g < caps.size(); ++g)
      caps[g] = static_cast<std::int64_t>(std::min(static_cast<double>(total_layers), std::floor(best_s / (m * per_layer[g]))));
    return caps;
  }

 private:
  // Calls visit(segment, slice, stage) for every stage of the split `layers` in pipeline order
  // while it returns true; returns whether every call did.
  template <typename Visit>
  bool for_each_stage(const std::vector<std::int64_t>& layers, Visit visit) const {
    const std::int64_t total = static_cast<std::int64_t>(inputs_.stages.size());
    std::int64_t stage = 0, first = 0;
    for (std::size_t g = 0; g < plan_.segments.size(); ++g) {
      PipelineSegment seg = plan_.segments[g];
      seg.layers = layers[g];
      for (std::int64_t i = 0; i < seg.stages; ++i, ++stage) {
        const StageSlice slice = make_slice(first, segment_stage_layers(seg, i), stage, total);
        if (!visit(g, slice, stage)) return false;
        first += slice.layers;
      }
    }
    return true;
  }

  StageSlice make_slice(std::int64_t first, std::int64_t layers, std::int64_t stage, std::int64_t total) const {
    StageSlice slice;
    slice.first_layer = first;
    slice.layers = layers;
    slice.has_embedding = stage == 0;
    slice.has_output_head = stage == total - 1;
    slice.inflight_microbatches = static_cast<double>(std::min(total - stage, inputs_.microbatches));
    return slice;
  }

  // Time terms do not depend on the held micro-batches; in a dense model not on the first layer.
  const StageSliceCost& stage_cost(std::size_t g, const StageSlice& slice) {
    if (!dense_) {
      scratch_ = costers_[g].cost(slice);
      return scratch_;
    }
    const std::size_t key = static_cast<std::size_t>(slice.layers) * 4 + (slice.has_embedding ? 2 : 0) +
                            (slice.has_output_head ? 1 : 0);
    if (!known_[g][key]) {
      memo_[g][key] = costers_[g].cost(slice);
      known_[g][key] = 1;
    }
    return memo_[g][key];
  }

  const CrossPoolPlan plan_;
  const bool dense_;
  std::vector<StageSliceCoster> costers_;
  std::vector<double> limits_;
  CrossPoolPipelineInputs inputs_;
  std::vector<std::vector<StageSliceCost>> memo_;
  std::vector<std::vector<char>> known_;
  StageSliceCost scratch_;
  PipelineSimulator simulator_;
  PipelineCosts costs_;
};

// Calls visit(layers) for every split of `total` layers over the segments, segment g taking at
// least stages[g] and at most caps[g] (the first segment's count ascending, then the next's, ...).
template <typename Visit>
void for_each_layer_split(const std::vector<std::int64_t>& stages, const std::vector<std::int64_t>& caps,
                          std::int64_t total, std::vector<std::int64_t>& layers, std::size_t g, Visit& visit) {
  std::int64_t rest_min = 0, rest_max = 0;
  for (std::size_t h = g + 1; h < stages.size(); ++h) rest_min += stages[h], rest_max += caps[h];
  if (g + 1 == stages.size()) {
    if (total < stages[g] || total > caps[g]) return;
    layers[g] = total;
    visit(layers);
    return;
  }
  for (std::int64_t l = std::max(stages[g], total - rest_max); l <= std::min(total - rest_min, caps[g]); ++l) {
    layers[g] = l;
    for_each_layer_split(stages, caps, total - l, layers, g + 1, visit);
  }
}

// The precisions a segment on `pool` may run: the pinned one, else the offered ones its GPU has.
std::vector<Precision> segment_precisions(const Cluster& pool, const PlanConstraints& fix) {
  std::vector<Precision> out;
  const std::vector<Precision> offered =
      fix.precision ? std::vector<Precision>{*fix.precision} : fix.precision_choices;
  for (auto p : offered)
    if (p == Precision::bf16 || pool.gpu.fp8_tflops > 0) out.push_back(p);
  return out;
}

struct SegmentChoice {
  std::int64_t tp = 1;
  Precision precision = Precision::bf16;
};

// Calls visit(choices) for every tp and precision per segment allowed on its pool with `dp`.
template <typename Visit>
void for_each_segment_choice(const ModelSpec& model, const MixedCluster& cluster, const std::vector<std::size_t>& order,
                             std::int64_t dp, const PlanConstraints& fix, std::vector<SegmentChoice>& choices,
                             std::size_t g, Visit& visit) {
  if (g == order.size()) {
    visit(choices);
    return;
  }
  const Cluster& pool = cluster.pools[order[g]];
  for (std::int64_t tp = 1; tp <= pool.gpus_per_node; tp *= 2) {
    if ((fix.tp && *fix.tp != tp) || !tp_allowed(model, pool, tp) || pool.gpus() % (dp * tp) != 0) continue;
    for (auto precision : segment_precisions(pool, fix)) {
      choices[g] = {tp, precision};
      for_each_segment_choice(model, cluster, order, dp, fix, choices, g + 1, visit);
    }
  }
}

}  // namespace

CrossPoolSearch search_cross_pool_pipelines(const ModelSpec& model, const MixedCluster& cluster,
                                            const Workload& workload, const PlanConstraints& fix, bool exhaustive,
                                            double must_beat_s) {
  const auto started = std::chrono::steady_clock::now();
  cluster.validate();
  workload.validate();
  CrossPoolSearch result;
  const Space space = space_of(fix);
  double best_s = exhaustive ? kInfinity : must_beat_s;
  if (!space.empty && cluster.pools.size() >= 2) {
    std::vector<std::size_t> prefix;
    std::vector<std::vector<std::size_t>> orders;
    pool_orders(cluster.pools.size(), prefix, orders);
    CrossPoolPlan plan;
    plan.base = fix.defaults;
    plan.base.cp = plan.base.ep = plan.base.vpp = 1;
    plan.base.etp = 0;
    plan.base.sequence_parallel = fix.sequence_parallel.value_or(true);
    plan.base.overlap_tp_comm = fix.overlap_tp_comm.value_or(true);
    for (const auto& order : orders) {
      std::int64_t smallest = cluster.pools[order.front()].gpus();
      for (auto p : order) smallest = std::min(smallest, cluster.pools[p].gpus());
      for (std::int64_t dp = 1; dp <= smallest; ++dp) {
        if (workload.global_batch % dp != 0) continue;
        std::vector<SegmentChoice> choices(order.size());
        auto per_choice = [&](const std::vector<SegmentChoice>& chosen) {
          plan.segments.clear();
          std::vector<std::int64_t> stages;
          for (std::size_t g = 0; g < order.size(); ++g) {
            const Cluster& pool = cluster.pools[order[g]];
            const std::int64_t n = pool.gpus() / (dp * chosen[g].tp);
            plan.segments.push_back({order[g], chosen[g].tp, n, 0, chosen[g].precision,
                                     fix.fp8_recipe.value_or(natural_fp8_recipe(pool.gpu))});
            stages.push_back(n);
          }
          const std::int64_t total = plan.stages();
          if (total > model.layers || (fix.pp && *fix.pp != total)) return;
          for (auto mb : space.micro_batches) {
            if (workload.global_batch % (dp * mb) != 0) continue;
            for (auto recompute : space.recomputes)
              for (auto zero : space.shardings) {
                plan.base.dp = dp;
                plan.base.micro_batch = mb;
                plan.base.recompute = recompute;
                plan.base.zero = zero;
                Configuration config(model, cluster, workload, fix, plan);
                // Splits whose bound cannot beat the best are skipped whole (exhaustive: none).
                const std::vector<std::int64_t> caps =
                    config.layer_caps(model.layers, exhaustive ? kInfinity : best_s);
                std::vector<std::int64_t> layers(order.size());
                auto visit = [&](const std::vector<std::int64_t>& split) {
                  ++result.evaluated;
                  const double bound = config.bound(split);
                  if (!exhaustive && bound >= best_s) return;
                  if (!config.fits(split)) return;
                  ++result.simulated;
                  const double t = config.simulate();
                  if (t < best_s) {
                    best_s = t;
                    result.best = plan;
                    for (std::size_t g = 0; g < split.size(); ++g) result.best->segments[g].layers = split[g];
                  }
                };
                for_each_layer_split(stages, caps, model.layers, layers, 0, visit);
              }
          }
        };
        for_each_segment_choice(model, cluster, order, dp, fix, choices, 0, per_choice);
      }
    }
  }
  if (result.best) result.estimate = estimate_cross_pool(model, cluster, *result.best, workload);
  result.search_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace tessera
