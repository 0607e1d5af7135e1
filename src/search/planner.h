// Planner: searches every valid plan for a model, cluster and workload, ranks them by predicted
// iteration time (ties: less memory) and returns the best. The search space: tp (dividing the
// heads and kv heads, within a node unless allowed), pp (even and Megatron-uneven layer splits),
// cp, ep (MoE), vpp, micro-batch, recompute (none, selective, full, full for only the first N
// layers of each chunk), optimizer sharding; dp = GPUs / (tp pp cp). MoE models add expert tensor
// parallelism, the dispatcher, EP overlap with delayed wgrad, and selective-recompute module sets
// (search/plan_space.h); with precision_choices holding fp8, FP8 with the GPU's natural recipe
// (and fp8_param_gather under a sharded optimizer).
//
// No two ranked plans are one configuration: the enumeration only produces canonical plans
// (canonical_plan in search/plan_space.h: no dispatcher or EP overlap variants without an
// expert-parallel group, no FP8 keys under bf16, ...), and candidates whose estimates are
// identical in every term (values the cost model treats alike, e.g. zero3 with pp > 1, which it
// costs as zero1) are one entry, the simpler plan.
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
// Candidates are ranked with the closed-form pipeline (estimate_analytical), skipping those whose
// lower bound (from a plan with recompute none; planner.cpp lists the bounds) cannot reach the
// best `rescored`; those best are re-scored with the simulated pipeline (estimate), which is what
// `tessera estimate` prints, and re-ranked, so the printed times are exactly estimate's.
// `evaluated` / `feasible` count the candidates costed (with options.exhaustive: all of them).
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
  // When `precision` is unset and this is not empty: the precisions searched (default: bf16 only,
  // what the multimodal planner's bf16 lower bounds assume; `tessera plan` adds fp8 on FP8 GPUs).
  std::vector<Precision> precision_choices;
  // MoE keys (search/plan_space.h lists what is searched when unset). etp 0 = tp.
  std::optional<std::int64_t> etp;
  std::optional<MoeDispatcher> dispatcher;
  std::optional<bool> overlap_ep, delay_wgrad;
  // Selective-recompute modules (RecomputeModule bits, 0 = core_attn); pinning them pins
  // recompute = selective.
  std::optional<unsigned> recompute_modules;
  // FP8 recipe (default: the GPU's natural one) and parameter gather in FP8.
  std::optional<Fp8Recipe> fp8_recipe;
  std::optional<bool> fp8_param_gather;
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
  // Candidates validate_plan rejected (checked on the ranked plans after the search, or on every
  // candidate with validate_every_candidate); 0 unless the enumeration misses one of its rules.
  std::int64_t invalid = 0;
  // Candidates merged into a simpler plan with an identical estimate (aliases).
  std::int64_t aliases = 0;
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
  // Tests: run validate_plan on every candidate (the enumeration is built to produce only valid
  // plans, so the hot loop skips it; PlanSearch::invalid counts the ones it would reject).
  bool validate_every_candidate = false;
  // Tests: cost every candidate (no memory or time-bound pruning; the result is the same).
  bool exhaustive = false;
};

PlanSearch search_plans(const ModelSpec& model, const Cluster& cluster, const Workload& workload,
                        const PlanConstraints& constraints, const PlannerOptions& options);

}  // namespace tessera
