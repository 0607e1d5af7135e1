// The disaggregated strategy's search (search/multimodal_planner.h): branch and bound over GPU
// splits. split_candidates takes each whole-node backbone count, from the largest down, in steps:
//   backbone  the planner's best backbone plan on that count and the slot loads it implies;
//   options   each module group's options on every GPU count the backbone leaves;
//   bounds    one simulation with every group at the envelope of its options (no split of the
//             count is faster), and one per option of the first group;
//   splits    every combination of options that fits, each with its lower bound;
//   upper     the count's best-bound split simulated: a time the other counts must beat;
// and stops at the count whose GEMM work alone, at the GPU's best rate, cannot beat the k-th best
// upper bound. best_splits then simulates the splits in order of lower bound until the bound
// passes the k-th best found. The simulated makespan never drops when a duration grows, so every
// bound holds (SplitSearch.LowerBoundsAreNeverAboveTheSimulatedStep).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "hardware/cluster.h"
#include "model/multimodal_spec.h"
#include "plan/data_mix.h"
#include "plan/plan.h"
#include "search/disaggregated_pipeline.h"
#include "search/module_group.h"
#include "search/multimodal_planner.h"
#include "search/planner.h"

namespace tessera {

// Module groups a model may have (encoders per modality + a generator).
inline constexpr std::size_t kMaxGroups = 4;

// What the split search is given.
struct SplitRequest {
  const MultimodalSpec& model;
  const Cluster& cluster;
  const std::vector<PackedSequence>& sequences;  // the step's, packed
  const std::vector<ModuleGroup>& groups;        // at most kMaxGroups
  Workload workload;
  double memory_limit_bytes = 0;
  const MultimodalOptions& options;
};

// The backbone's search space per GPU count: full recompute of all layers or none (no partial),
// and the sharded optimizers only (the unsharded one holds more memory for the same traffic), to
// keep the search of ~70 counts inside a second; bf16 only: the lower bounds assume the 16-bit
// GEMM peak.
PlanConstraints backbone_count_space();

// A backbone count's plan and what its splits choose from.
struct BackboneOptions {
  BackboneCandidate backbone;
  std::vector<std::vector<GroupOption>> options;  // [group], ascending GPUs
  double envelope_bound_s = 0;                    // no split of this count is faster
  std::vector<double> first_option_bound_s;       // [option of group 0]: no split with it is faster
};

// One split: a backbone count and one option per group.
struct SplitCandidate {
  double lower_bound_s;
  std::uint32_t backbone;                        // index into SplitSpace::backbones
  std::array<std::uint32_t, kMaxGroups> option;  // index into that backbone's options[group]
};

struct SplitSpace {
  std::vector<BackboneOptions> backbones;
  std::vector<SplitCandidate> candidates;
  // The whole-node count where the backbone alone is fastest (fewer GPUs can beat all of them
  // when the count divides the batch and the heads better); 0 when no count has a plan.
  std::int64_t best_alone_gpus = 0;
  double best_alone_s = 0;
  std::int64_t evaluated = 0;  // splits bounded
  std::int64_t simulated = 0;  // pipelines simulated
};

// Every backbone count's options, bounds and splits the bounds leave (with options.exhaustive:
// every count and split).
SplitSpace split_candidates(const SplitRequest& request);

// The simulated step of one split.
double split_time_s(const SplitRequest& request, const BackboneOptions& backbone, const SplitCandidate& split);

// The best split per backbone count, best first, at most options.top_k (without their rates:
// model_flops, mfu, tokens_per_s and samples_per_s are left 0). Sorts space.candidates and
// counts its simulations into space.simulated.
std::vector<MultimodalPlan> best_splits(const SplitRequest& request, SplitSpace& space);

}  // namespace tessera
