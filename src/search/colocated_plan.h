// The colocated strategy of a multimodal plan (NVIDIA, "Heterogeneous Parallelism for Multimodal
// LLM Training", 2026: up to +49.3% TFLOP/s per GPU over one layout): every module on the same
// GPUs (the whole cluster), each encoder group (an encoder and its projector, module_group.h) with
// its own tp x dp layout or the backbone's. The modules are time-sliced in the step:
//   1. each own-layout group's forward over the step's media in one pass per GPU: the step's
//      items spread over the group's dp ranks whole, the busiest rank within one item of the mean
//      (module_group.h group_slot_times, the step as one slot). Its activations are held to its
//      backward phase anyway, so smaller passes would save no memory and pay the host's dispatch
//      once each. Groups one after another;
//   2. the boundary: the projected media tokens reshaped from the group's grouping to the
//      backbone's first stage (an all-to-all, boundary_reshape_s);
//   3. the backbone's pipeline, simulated as the monolithic path does (monolithic_plan.h), with
//      the groups that share the backbone's layout folded into its first / last stage;
//   4. the boundary back: the media tokens' gradients (groups with a trainable member);
//   5. each own-layout group's backward, then its gradient sync over its dp ranks;
// then the backbone's tail (optimizer, exposed DP traffic). Phases do not overlap the pipeline's
// fill and drain (the forward phase could start the first stage earlier): a conservative step.
//
// A group sharing the backbone's layout runs inside the pipeline exactly as in the monolithic
// plan, with no reshape, so every group sharing it gives the monolithic plan's step (tested to
// 1e-9). The generator always shares it: its forward needs the backbone's last-stage output of the
// same micro-batch and its backward feeds that stage's backward, so a phase of its own would force
// the backbone into GPipe order (every micro-batch's activations held at once).
//
// Memory, on every GPU: the backbone's peak stage with the folded modules (monolithic_plan's
// peak) plus every own-layout module's 16-bit weights, fp32 gradients, Adam share over its dp and
// saved activations of its share of the step, held from its forward phase to its backward phase;
// the backbone's reserve covers the GPU.
#pragma once

#include <cstdint>
#include <vector>

#include "cost/module_cost.h"
#include "hardware/cluster.h"
#include "model/multimodal_spec.h"
#include "plan/data_mix.h"
#include "plan/plan.h"
#include "search/module_group.h"
#include "search/multimodal_planner.h"

namespace tessera {

// How one module group runs in a colocated plan.
struct GroupLayout {
  bool shares_backbone = true;  // inside the backbone's stage, under its tp and dp (monolithic's way)
  ModulePlan own;               // otherwise: tp x dp over every GPU (own.gpus() == the cluster's GPUs)
};

struct ColocatedLayouts {
  Recompute shared_recompute = Recompute::none;  // of the modules sharing the backbone's layout
  std::vector<GroupLayout> groups;               // one per module_groups() entry, in that order
};

// Every group sharing the backbone's layout (the monolithic point of the colocated space).
ColocatedLayouts shared_layouts(const MultimodalSpec& model, std::int64_t gpus_per_node, Recompute shared_recompute);

// The boundary between a group's layout and the backbone's first stage, one direction: `bytes`
// of tokens (one copy) move from the group's dp shards (each held by its tp ranks, which split
// the sending: bytes / (dp x tp) per rank) to the backbone's first-stage shards over dp x cp (each
// tp rank receives its copy of its shard, 1/tp of it under sequence parallelism). An NCCL
// all-to-all over the cluster's GPUs: each rank moves the larger of what it sends and what it
// receives, its own node's share over NVLink and the rest through its own NIC at once
// (cost/collective_cost.h expert_all_to_all_time_s). Zero for a group sharing the backbone's
// layout (the tokens are already where the backbone reads them). An own layout spreads each
// step's items over its ranks, away from their replica, so it pays even with the backbone's tp
// and dp.
double boundary_reshape_s(double bytes, const GroupLayout& layout, const Plan& backbone, const Cluster& cluster);

// The colocated step for one backbone plan on every GPU of `cluster` and these layouts; only the
// `max_replicas` replicas with the most folded module work are simulated (all when 0). fits ==
// false when a GPU runs out of memory (never an error). Throws Error("layouts", ...) for a layout
// list that does not match the model's groups, a generator given its own layout, or an own layout
// not on every GPU.
MultimodalPlan colocated_plan(const MultimodalSpec& model, const Cluster& cluster,
                              const std::vector<PackedSequence>& sequences, const Plan& backbone_plan,
                              const Workload& workload, const ColocatedLayouts& layouts, double memory_limit_bytes,
                              std::int64_t max_replicas);

struct ColocatedSearch {
  MultimodalPlan plan;  // the fastest that fits, re-simulated over every replica
  ColocatedLayouts layouts;
  bool found = false;
  std::int64_t evaluated = 0;  // (backbone layout, shared recompute, groups sharing) points simulated
};

// The fastest colocated plan over `backbone_plans` (each valid on `cluster`): per plan, both
// shared recomputes and every subset of encoder groups sharing the backbone's layout are
// simulated (the pipeline depends only on those); the others take their own layouts (tp a power
// of two within a node dividing every member's heads, dp = the rest of the GPUs, with or without
// full recompute), the fastest combination that fits, since their phases add to the step.
// Points are ranked on the `replicas_ranked` heaviest replicas.
ColocatedSearch search_colocated(const MultimodalSpec& model, const Cluster& cluster,
                                 const std::vector<PackedSequence>& sequences, const std::vector<Plan>& backbone_plans,
                                 const Workload& workload, double memory_limit_bytes, std::int64_t replicas_ranked);

}  // namespace tessera
