// What the user pins of a plan search (`tessera plan --fix`, formats/plan_constraints_text.h) and
// the search space's choices: a value type of the plan layer, so the text format below the planner
// can fill it without the planner (search/planner.h takes it).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "plan/plan.h"

namespace tessera {

// Degrees or switches pinned by the user (--fix); unset = searched.
struct PlanConstraints {
  std::optional<std::int64_t> tp, pp, cp, ep, vpp, micro_batch;
  std::optional<Recompute> recompute;
  // When `recompute` is unset and this is not empty: the recompute settings searched (default:
  // none, selective, full).
  std::vector<Recompute> recompute_choices;
  std::optional<std::int64_t> recompute_layers;  // 0 = every layer of a chunk under full recompute
  std::optional<bool> sequence_parallel;
  std::optional<OptimizerSharding> zero;
  // When `zero` is unset and this is not empty: the shardings searched (default: all three).
  std::vector<OptimizerSharding> zero_choices;
  std::optional<Precision> precision;
  // When `precision` is unset: the precisions searched. Default bf16 and fp8 (with the GPU's
  // natural recipe); fp8 is dropped on GPUs without FP8 tensor cores.
  std::vector<Precision> precision_choices = {Precision::bf16, Precision::fp8};
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
  // TP-communication overlap (Megatron --tp-comm-overlap, TE userbuffers); unset = on wherever
  // it is legal (tp > 1 with sequence parallelism), where it is never slower (search/planner.h).
  std::optional<bool> overlap_tp_comm;
  // Offload tiers (plan/memory_tiers.h): pinned, or searched (search/planner.h: only when no
  // plan fits on the GPUs alone).
  std::optional<MemoryTier> offload_optimizer, offload_params, offload_activations;
  bool allow_cross_node_tp = false;
  // Every field the search does not set (overlap switches, attention kernel, p2p) comes from here.
  Plan defaults;
  // The per-GPU memory limit, exactly, when set; else the GPU's usable memory less
  // kDefaultMemoryHeadroomFraction of it (search/planner.h).
  std::optional<double> max_memory_gib;
};

}  // namespace tessera
