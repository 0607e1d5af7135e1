// The multimodal planner: how to run a model of several modules (encoders, projectors, an LLM
// backbone, a generator) on one cluster, for a data mix. Three strategies on the same GPUs:
//
//   monolithic      the Megatron-LM way: one layout; the encoders and projectors run inside the
//                   first pipeline stage and the generator inside the last, under the backbone's
//                   tp and dp. Each data-parallel replica runs its own micro-batches, whose image
//                   load differs, so the slowest replica sets the step.
//   disaggregated   each module group gets its own GPUs and plan (DistTrain, Zhang et al.,
//                   SIGCOMM'25): the encoder groups form a pipeline stage in front of the backbone's
//                   stages and the generator one behind them; at each micro-batch slot a group
//                   serves that slot of every backbone replica, spread evenly over its own dp
//                   ranks; activations and gradients cross between groups over the network.
//   colocated       every module on every GPU, each encoder group with its own tp x dp layout or
//                   the backbone's, time-sliced in the step (encoder forward, the backbone's
//                   pipeline, encoder backward) with the boundary reshapes between the layouts
//                   costed as all-to-alls (search/colocated_plan.h).
//
// Each slot's encoder / generator work comes from the sequences drawn from the data mix, and the
// whole step runs through the pipeline simulator, so heavy slots show up as stalls and bubbles.
//
// The disaggregated search is exact for the model it uses: each module group's best plan per GPU
// count is tabulated once, the backbone's best plan per whole-node GPU count comes from the
// planner, and splits (backbone, one group per encoder modality with its projector, generator)
// are searched by branch and bound over integer GPU counts (search/split_search.h), where a
// split's lower bound is its busiest stage's work plus the backbone's tail (the simulated time is
// never below it). GPUs may be left idle.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cost/estimate.h"
#include "cost/module_cost.h"
#include "hardware/cluster.h"
#include "model/multimodal_spec.h"
#include "plan/data_mix.h"
#include "plan/plan.h"
#include "schedule/pipeline_simulator.h"

namespace tessera {

// One module's place in a multimodal plan.
struct ModulePlacement {
  std::string name;
  ModuleRole role = ModuleRole::encoder;
  std::int64_t gpus = 0;     // GPUs of its group; in monolithic, the stage GPUs it shares
  ModulePlan plan;           // non-backbone modules
  double busy_s = 0;         // compute time per step on its busiest GPU (forward + backward)
  double peak_memory_bytes = 0;
  // Colocated only: the module runs in phases of its own on every GPU under `plan` (false: inside
  // the backbone's first / last stage under its tp and dp, as in monolithic).
  bool own_layout = false;
};

struct MultimodalPlan {
  bool disaggregated = false;
  bool colocated = false;  // search/colocated_plan.h (neither flag: monolithic)
  Plan backbone_plan;
  std::int64_t backbone_gpus = 0;
  std::vector<ModulePlacement> modules;  // in model order, the backbone included
  std::int64_t gpus_used = 0;
  std::int64_t gpus_idle = 0;
  double iteration_time_s = 0;
  double model_flops = 0;   // per step, every module (Megatron-Core convention per module)
  double mfu = 0;           // model_flops / (time x cluster GPUs x dense peak)
  double tokens_per_s = 0;  // backbone tokens (text + media) per second
  double samples_per_s = 0;
  double peak_memory_bytes = 0;  // highest over all groups
  bool fits = false;
  // Colocated only: the own-layout modules' forward and backward phases and gradient syncs, and
  // the boundary reshapes between their layouts and the backbone's (both directions), per step.
  double module_phases_s = 0;
  double boundary_s = 0;
};

struct MultimodalSearch {
  std::vector<MultimodalPlan> plans;  // disaggregated, best first (at most top_k)
  // The references on every GPU of the cluster (the Megatron-LM way: world size = the cluster).
  MultimodalPlan monolithic;          // the best monolithic plan
  bool monolithic_found = false;
  double backbone_only_mfu = 0;       // the backbone alone, text only, its MFU over the cluster
  // The same on the whole-node count where the backbone alone runs fastest, when that is fewer
  // GPUs (the rest idle; MFU still over the whole cluster). subset_gpus == 0 when there is none.
  std::int64_t subset_gpus = 0;
  MultimodalPlan monolithic_subset;
  bool monolithic_subset_found = false;
  double backbone_only_subset_mfu = 0;
  // Colocated on every GPU (search/colocated_plan.h): every module on the same GPUs, each encoder
  // group with its own layout or the backbone's. Its space holds the monolithic layout on every
  // GPU, so it is never slower than `monolithic`.
  MultimodalPlan colocated;
  bool colocated_found = false;
  std::int64_t evaluated = 0;         // split candidates costed (bounds and simulations)
  std::int64_t simulated = 0;
  double search_time_s = 0;
  std::int64_t sequences = 0;         // backbone sequences per step (the global batch)
  std::int64_t samples = 0;           // samples packed into them
  double media_token_fraction = 0;    // of the backbone tokens
};

struct MultimodalOptions {
  std::size_t top_k = 3;
  std::uint64_t seed = 1;
  int threads = 0;  // for the backbone planner; 0 = hardware concurrency
  // Largest backbone GPU count searched (0 = the cluster); tests use it for brute-force checks.
  std::int64_t max_backbone_gpus = 0;
  // Backbone GPU counts are multiples of this (0 = the node size): tp groups stay in a node.
  std::int64_t backbone_gpu_step = 0;
  // Brute force, for checking the search: every backbone count, every split of the rest with
  // each group's best plan on exactly its GPU count (the rest idle), all simulated, no bounds.
  bool exhaustive = false;
};

// Throws Error naming the field for an invalid model, mix, batch or cluster. A request where
// nothing fits returns no plans (plans empty) rather than throwing.
MultimodalSearch search_multimodal_plans(const MultimodalSpec& model, const Cluster& cluster,
                                         const DataMix& mix, std::int64_t global_batch,
                                         const MultimodalOptions& options = {});

// The strategies a search compares, and the one it recommends: the fastest of the best
// disaggregated plan, the monolithic layouts (on every GPU, or on the subset of fewer GPUs where
// the backbone alone runs fastest) and the colocated plan; none when nothing fits. Ties keep the
// earlier strategy in this order (disaggregated, monolithic, subset, colocated): colocated comes
// last because a colocated plan that ties monolithic is the monolithic layout itself (every group
// sharing the backbone's), which Megatron-LM runs as it is.
enum class MultimodalStrategy { none, disaggregated, monolithic, monolithic_subset, colocated };
MultimodalStrategy recommended_strategy(const MultimodalSearch& search);
// Every strategy the search found, fastest first, ties in the order above (front() is the
// recommendation; [1] the runner-up the reports measure the winner's margin against).
std::vector<MultimodalStrategy> ranked_strategies(const MultimodalSearch& search);
// The strategy's plan in `search` (the best disaggregated one for disaggregated); throws Error for
// none or a strategy the search did not find.
const MultimodalPlan& strategy_plan(const MultimodalSearch& search, MultimodalStrategy strategy);

// The simulated step of one disaggregated plan (its per-op timeline), for traces; the step's tail
// (gradient traffic and optimizer after the pipeline) is each stage's dp-sync, so it ends at the
// plan's iteration time.
Timeline disaggregated_timeline(const MultimodalSpec& model, const Cluster& cluster, const DataMix& mix,
                                std::int64_t global_batch, const MultimodalPlan& plan, std::uint64_t seed);

// The backbone plan of a monolithic (or colocated) plan simulated as `tessera estimate --trace` simulates a plan
// (cost/cost_model.h, on the plan's GPUs): the pipeline the modules fold into, without their own
// slots (the monolithic search's per-replica costs live in search/monolithic_plan.cpp).
Timeline monolithic_backbone_timeline(const MultimodalSpec& model, const Cluster& cluster, const DataMix& mix,
                                      std::int64_t global_batch, const MultimodalPlan& plan);

}  // namespace tessera
