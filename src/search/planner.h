// Planner: searches every valid plan for a model, cluster and workload, ranks them by predicted
// iteration time (ties: less memory) and returns the best. The search space: tp (dividing the
// heads and kv heads, within a node unless allowed), pp (even and Megatron-uneven layer splits),
// cp, ep (MoE), vpp, micro-batch, recompute (none, selective, full, full for only the first N
// layers of each chunk), optimizer sharding; dp = GPUs / (tp pp cp).
//
// Pruning that cannot drop the best plan:
//   - divisibility (validate_plan) and memory (a plan that does not fit is not ranked);
//   - dominance: with tp > 1, sequence parallelism moves the same bytes (reduce-scatter +
//     all-gather = all-reduce) while halving nothing but memory and norm work, so sp on is never
//     slower or bigger in this cost model; zero2 is not searched (no Megatron-LM flag; it has
//     zero1's time and less memory than zero1 only by sharding gradients, which Megatron's
//     distributed optimizer does not).
// Ties (equal time and memory) go to the simpler plan: less sharding, less recompute, fewer
// chunks, smaller micro-batches, fewer cp / ep / pp ranks (a deterministic order).
// Every candidate is ranked with the closed-form pipeline (estimate_analytical); the best ones
// are re-scored with the simulated pipeline (estimate), which is what `tessera estimate` prints,
// and re-ranked, so the printed times are exactly estimate's.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "cost/cost_model.h"
#include "cost/estimate.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// Degrees or switches pinned by the user (--fix); unset = searched.
struct PlanConstraints {
  std::optional<std::int64_t> tp, pp, cp, ep, vpp, micro_batch;
  std::optional<Recompute> recompute;
  std::optional<std::int64_t> recompute_layers;  // 0 = every layer of a chunk under full recompute
  std::optional<bool> sequence_parallel;
  std::optional<OptimizerSharding> zero;
  // When `zero` is unset and this is not empty: the shardings searched (default: all three).
  std::vector<OptimizerSharding> zero_choices;
  std::optional<Precision> precision;
  bool allow_cross_node_tp = false;
  // Every field the search does not set (overlap switches, attention kernel, p2p) comes from here.
  Plan defaults;
  std::optional<double> max_memory_gib;  // replaces the GPU's usable memory when set
};

struct RankedPlan {
  Plan plan;
  Estimate estimate;  // simulated pipeline (what `tessera estimate` prints)
};

struct PlanSearch {
  std::vector<RankedPlan> plans;  // best first, at most top_k
  std::int64_t evaluated = 0;     // candidates costed
  std::int64_t feasible = 0;      // of which fit in memory
  double search_time_s = 0;
  // Smallest per-GPU peak memory over every evaluated plan (what would make one fit).
  double min_peak_memory_bytes = 0;
  Plan min_memory_plan;
  // With options.reference: 1 + the feasible candidates faster than it.
  std::int64_t reference_rank = 0;
};

struct PlannerOptions {
  std::size_t top_k = 5;
  int threads = 0;  // 0 = hardware concurrency
  // Called from the search with (done, total) candidate groups; may be empty.
  std::function<void(std::int64_t, std::int64_t)> progress;
  // When set, the search also counts feasible candidates faster than this plan (by the closed
  // form, like every candidate) to place a published plan among all plans.
  std::optional<Plan> reference;
  // Rank the reference by the simulated pipeline (what `tessera estimate` prints) instead of the
  // closed form: every feasible candidate is simulated, so this is for reports, not the CLI.
  bool simulate_reference_rank = false;
  // How many of the best plans by the closed form are re-scored with the simulator (at least top_k).
  std::size_t rescored = 64;
};

PlanSearch search_plans(const ModelSpec& model, const Cluster& cluster, const Workload& workload,
                        const PlanConstraints& constraints, const PlannerOptions& options);

}  // namespace tessera
