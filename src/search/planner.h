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
//     distributed optimizer does not);
//   - dominance: TP-communication overlap (Megatron --tp-comm-overlap: Transformer Engine's
//     userbuffers pipeline the sequence-parallel all-gather / reduce-scatter with the GEMMs they
//     feed) only lowers the exposed TP time in this cost model and holds the same memory, so
//     where it is legal (tp > 1 with sequence parallelism; arguments.py asserts
//     sequence_parallel) it is on unless pinned off (--fix overlap_tp=0); pinned on, shapes
//     where it is illegal are skipped.
// Ties: the final list is ordered by time; plans within kTimeTieFraction of the fastest of
// their run of ties are ordered by lower peak memory, then fewer tp / cp / expert groups
// crossing nodes (cross_node_groups), then the simpler plan (less sharding, less recompute,
// fewer chunks, smaller micro-batches, fewer cp / ep / pp ranks: a deterministic order).
// Candidates are ranked with the closed-form pipeline (estimate_analytical), skipping those whose
// lower bound (from a plan with recompute none; search/shape_search.h lists the bounds) cannot
// reach the best `rescored`; those best are re-scored with the simulated pipeline (estimate), which is what
// `tessera estimate` prints, and re-ranked, so the printed times are exactly estimate's.
// `evaluated` / `feasible` count the candidates costed (with options.exhaustive: all of them).
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

#include "cost/cost_model.h"
#include "cost/estimate.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"
#include "plan/plan_constraints.h"

namespace tessera {

// The time of no plan yet: where every search for the fastest (or cheapest) candidate starts.
inline constexpr double kInfinity = std::numeric_limits<double>::infinity();

// Default memory headroom: plans must fit in 95% of the GPU's usable memory. The memory model
// already holds the CUDA context, workspaces, NCCL buffers per communicator and 10% of transient
// memory for allocator fragmentation; the headroom covers what it cannot see: fragmentation
// growth over a long run (PyTorch's caching allocator keeps freed blocks of many sizes), NCCL
// buffers of communicators created lazily (e.g. by checkpointing or evaluation), and the
// memory model's own error (median 2.7%, max 22% against torchtitan's published peaks,
// scripts/memory_validation.py). 5% (4 GiB of an 80 GB GPU) is the margin practitioners leave
// when tuning the micro-batch to the largest that fits.
inline constexpr double kDefaultMemoryHeadroomFraction = 0.05;

// Ranked plans whose iteration times differ by less than this fraction are ties (ordered by
// lower peak memory, then fewer communication groups crossing nodes, then simplicity): an order
// below the step-to-step jitter of a real run (~1%) and the cost model's error (~5%).
inline constexpr double kTimeTieFraction = 1e-3;

// The memory limit in force: `max_memory_gib` exactly, else usable memory less the headroom.
struct MemoryLimit {
  double limit_bytes = 0;
  double headroom_bytes = 0;  // 0 when max_memory_gib is given
};
MemoryLimit memory_limit(const Cluster& cluster, const PlanConstraints& constraints);

struct RankedPlan {
  Plan plan;
  Estimate estimate;  // simulated pipeline (what `tessera estimate` prints)
};

// One costed candidate that fits, by the closed form (the search's ranking time).
struct FeasiblePoint {
  double iteration_time_s = 0;
  double peak_memory_bytes = 0;
};

struct PlanSearch {
  std::vector<RankedPlan> plans;  // best first, at most top_k
  // With options.record_feasible: every feasible candidate costed, in no particular order.
  std::vector<FeasiblePoint> feasible_points;
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
  // The per-GPU memory limit the search applied and the headroom taken off the usable memory.
  double memory_limit_bytes = 0;
  double headroom_bytes = 0;
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
  // How many of the best plans by the closed form are re-scored with the simulator (at least
  // top_k; dominated variants are dropped after re-scoring, so the list may hold fewer).
  std::size_t rescored = 64;
  // Tests: run validate_plan on every candidate (the enumeration is built to produce only valid
  // plans, so the hot loop skips it; PlanSearch::invalid counts the ones it would reject).
  bool validate_every_candidate = false;
  // Tests: cost every candidate (no memory or time-bound pruning; the result is the same).
  bool exhaustive = false;
  // Keep the variants of one layout that the cost model predicts tie (zero1 vs zero3 at the same
  // time, dp and cp swapped): a list for people shows them once, but the goodput controller
  // (adapt/candidate_set.cpp) keeps them, since measured step times can tell them apart.
  bool keep_tied_variants = false;
  // Reports: keep every feasible candidate's closed-form time and peak memory (the time-vs-memory
  // scatter and its Pareto front; with exhaustive, every feasible plan of the space).
  bool record_feasible = false;
};

PlanSearch search_plans(const ModelSpec& model, const Cluster& cluster, const Workload& workload,
                        const PlanConstraints& constraints, const PlannerOptions& options);

}  // namespace tessera
