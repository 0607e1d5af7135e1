// The step of a disaggregated multimodal plan as one pipeline: the encoder groups form a stage in
// front of the backbone's stages, the generator group one behind them (DistTrain, Zhang et al.,
// SIGCOMM'25, Sec. 4). Each group stage's per-slot times come from the data (module_group.h);
// activations cross between groups over the network. Plain 1F1B (the backbone has vpp = 1).
#pragma once

#include <cstdint>
#include <vector>

#include "cost/cost_model.h"
#include "hardware/cluster.h"
#include "model/multimodal_spec.h"
#include "plan/plan.h"
#include "schedule/pipeline_simulator.h"
#include "search/module_group.h"

namespace tessera {

// A backbone on `gpus` GPUs with its plan: the simulator inputs, the slot loads its replicas and
// micro-batches imply, and the pieces of the step's lower bound that only the backbone sets.
struct BackboneCandidate {
  std::int64_t gpus = 0;
  Plan plan;            // as planned (may interleave)
  Estimate estimate;    // of `plan`, the backbone alone
  PipelineInputs inputs;  // of `plan` without interleaving: the extended pipeline is plain 1F1B
  // What interleaving saves the backbone alone (simulated, vpp = 1 minus as planned, at least 0).
  // The extended pipeline is simulated without interleaving and this is taken off its step: the
  // encoder and generator stages keep their own fill and drain, the backbone's shrinks as it
  // does alone.
  double interleaving_saving_s = 0;
  SlotLoads loads;
  double stage_busy_s = 0;  // the busiest backbone stage's work per step
  // Per backbone stage s, for the step's lower bound: (slot 0's forward through the stages before
  // s) + (s's work); the last slot's backward back through the stages before s; and the part of
  // s's gradient sync that can end after its last backward. No schedule finishes stage s before
  // head_busy + max(drain, sync).
  std::vector<double> stage_head_busy_s, stage_drain_s, stage_sync_after_s;
  double stage_bound_s = 0;       // the backbone alone: max over s of that
  double forward_through_s = 0;   // slot 0's forward through every backbone stage and boundary
  double backward_through_s = 0;  // the last slot's backward back through them
};

// Cluster of the first `gpus` GPUs (whole nodes, or one partial node).
Cluster sub_cluster(const Cluster& cluster, std::int64_t gpus);

BackboneCandidate backbone_candidate(const MultimodalSpec& model, const Cluster& cluster, std::int64_t gpus,
                                     const Plan& plan, const Workload& workload,
                                     const std::vector<PackedSequence>& sequences);

// Time to move a mean slot's activations between a group and the backbone's stage.
double group_transfer_s(const MultimodalSpec& model, const Cluster& cluster, const BackboneCandidate& backbone,
                        const ModuleGroup& group, const GroupOption& option);

// A lower bound of the simulated step (extended_pipeline's makespan + tail) for these options,
// one per group: every stage's work plus the fill before it and the drain after it.
double disaggregated_lower_bound_s(const MultimodalSpec& model, const Cluster& cluster, const BackboneCandidate& backbone,
                                   const std::vector<ModuleGroup>& groups,
                                   const std::vector<const GroupOption*>& options);

struct ExtendedPipeline {
  PipelineCosts costs;
  double tail_s = 0;  // optimizer and DP traffic after the simulated makespan
};
// What the extended pipeline needs of one group: its per-slot times, transfer and sync.
struct GroupStage {
  GroupSlotTimes times;
  double transfer_s = 0;
  double sync_s = 0;
};
ExtendedPipeline extended_pipeline(const BackboneCandidate& backbone, const std::vector<ModuleGroup>& groups,
                                   const std::vector<GroupStage>& stages);
// What one option of a group puts into the extended pipeline.
GroupStage group_stage(const MultimodalSpec& model, const Cluster& cluster, const BackboneCandidate& backbone,
                       const ModuleGroup& group, const GroupOption& option);
// Lower envelopes of a group's options: element i holds, per slot, the fastest forward and
// backward of options[0..i], and their shortest transfer and sync. The simulated makespan never
// decreases when a duration grows (each op starts at the max of its predecessors' ends), so a step
// with a group at an envelope bounds every choice among those options from below.
std::vector<GroupStage> prefix_envelopes(const MultimodalSpec& model, const Cluster& cluster,
                                         const BackboneCandidate& backbone, const ModuleGroup& group,
                                         const std::vector<GroupOption>& options);
ExtendedPipeline extended_pipeline(const MultimodalSpec& model, const Cluster& cluster, const BackboneCandidate& backbone,
                                   const std::vector<ModuleGroup>& groups,
                                   const std::vector<const GroupOption*>& options);

}  // namespace tessera
