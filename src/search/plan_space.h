// The planner's search space: the layouts (shapes) searched, which values of the keys inside a
// shape (recompute, sharding, precision, MoE) are searched for a model and GPU, and the canonical
// form of a plan (fields that the plan's other fields make meaningless reset to their defaults),
// so that two plans that are one configuration are one plan. Small value tables, built once per
// search (or per shape), outside the hot loop.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hardware/cluster.h"
#include "hardware/gpu_spec.h"
#include "model/model_spec.h"
#include "plan/plan.h"
#include "search/planner.h"

namespace tessera {

// Fields that do not change what runs, reset to their defaults:
//   - dense model: etp 0, dispatcher alltoall, capacity 0, no forced balance, no EP overlap;
//   - ep = 1 (no expert-parallel group to dispatch over): dispatcher alltoall, no EP overlap;
//   - etp equal to tp: 0 (Megatron's default is etp = tp);
//   - bf16: fp8_recipe tensorwise, no fp8_param_gather;
//   - recompute other than selective: no modules; selective: core_attn alone is the default (0),
//     mlp dropped when no layer has a dense MLP, shared_experts when the model has none, moe_act and
//     shared_experts when the whole moe module is recomputed (they are inside it);
//   - optimizer sharding other than zero3: reshard_after_forward on (the key is FSDP's);
//   - full recompute of N layers with N >= every chunk's layers: N = 0 (every layer);
//   - tp = 1: no sequence parallelism, no TP-communication overlap (no TP group); without
//     sequence parallelism no TP-communication overlap (Megatron asserts it needs sp).
Plan canonical_plan(const Plan& plan, const ModelSpec& model);

// How many of the plan's tensor-, context- and expert-parallel groups span more than one node
// (0 to 3; ranks laid out tp innermost, then cp, dp; experts etp, then ep): the groups whose
// collectives leave NVLink. The planner breaks time ties with it.
int cross_node_groups(const Plan& plan, const Cluster& cluster);

// Field-wise equality of every Plan field (one configuration; adapt/plan_family.h has same_plan,
// which compares only the fields a reconfiguration changes).
bool same_configuration(const Plan& a, const Plan& b);

// Selective-recompute module sets searched (RecomputeModule bits; 0 = core_attn, Megatron's
// default), each already canonical and distinct. Dense models: core_attn only. MoE models add the
// sets Megatron-LM's own recipes and tests run (Megatron-LM d98e8a64):
//   moe_act                           tests/functional_tests/.../tp4_ep2_etp2_pp2_scoped_cudagraph
//   layernorm+moe_act                 docs/user-guide/features/fine_grained_activation_offloading.md
//   mla_up_proj (MLA)                 NVIDIA's DGX Cloud DeepSeek-V3 recipe
//   layernorm+mla_up_proj+mlp+moe_act tests/functional_tests/.../tp2_pp2_ep4_etp1_selective_recompute
//   layernorm+mla_up_proj+mlp+moe     examples/megatron_fsdp/sbatch_mfsdp_deepseek_v3.sh
// (mla_up_proj only for MLA models, mlp only where some layer has a dense MLP; moe_act needs
// --moe-grouped-gemm, which the export always sets for MoE models).
std::vector<unsigned> searched_recompute_modules(const ModelSpec& model);

// The expert-communication variants of one MoE layout: dispatcher x EP overlap x delayed wgrad.
struct ExpertComm {
  MoeDispatcher dispatcher = MoeDispatcher::alltoall;
  bool overlap_ep = false;
  bool delay_wgrad = false;
};
// With ep = 1 (or a dense model) only the default. Otherwise alltoall and flex each without
// overlap, with overlap, and with overlap plus delayed wgrad (Megatron: delay_wgrad_compute
// requires overlap_moe_expert_parallel_comm), and allgather without overlap (Megatron: the overlap
// needs the alltoall or flex dispatcher). validate_plan still rules out overlap where its other
// conditions fail (full recompute, pp > 1 without vpp, MTP > 1).
// Written into `out` (its capacity reused: the planner calls this once per shape).
void searched_expert_comm(const ModelSpec& model, std::int64_t ep, std::vector<ExpertComm>& out);

// Expert tensor-parallel degrees searched for a layout, each with etp x ep dividing tp x cp x dp:
// tp (0) and, with ep > 1, every smaller divisor of tp (MoE parallel folding; DeepSeek-V3-style
// recipes run etp = 1 under tp > 1). Dense models: 0 only. Empty when no etp fits.
std::vector<std::int64_t> searched_expert_tp(const ModelSpec& model, std::int64_t tp, std::int64_t cp,
                                             std::int64_t dp, std::int64_t ep);

// The FP8 recipe a GPU runs natively: mxfp8 on GPUs with block-scaled MXFP8 tensor cores
// (Blackwell), else Transformer Engine's per-tensor current scaling ("tensorwise", Hopper).
Fp8Recipe natural_fp8_recipe(const GpuSpec& gpu);

// Whether validate_plan accepts the plan (for filters: no exception escapes).
bool is_valid_plan(const Plan& plan, const ModelSpec& model, const Cluster& cluster, const Workload& workload);

// One layout of the search: the degrees of every parallelism but dp (the GPUs left over).
struct PlanShape {
  std::int64_t tp, pp, cp, ep, etp;
};

// Every shape the search tries, less what `fix` pins, each dividing the GPUs it is given: tp the
// heads (and the kv heads; within a node unless allowed), pp at most the layers, cp where context
// parallelism runs, ep the experts; etp from searched_expert_tp.
std::vector<PlanShape> enumerate_shapes(const ModelSpec& model, const Cluster& cluster, const Workload& workload,
                                        const PlanConstraints& fix);

// The values the search tries for the keys inside a shape, less what `fix` pins.
struct SearchChoices {
  std::vector<Recompute> recomputes;
  std::vector<OptimizerSharding> zeros;
  std::vector<Precision> precisions;  // fp8 only where the GPU runs it (and its recipe)
  Fp8Recipe recipe = Fp8Recipe::tensorwise;
  std::optional<bool> overlap_tp_pin;  // TP-communication overlap pinned on or off
  std::vector<unsigned> module_sets;   // selective-recompute module sets
};
SearchChoices search_choices(const ModelSpec& model, const Cluster& cluster, const PlanConstraints& fix);

}  // namespace tessera
