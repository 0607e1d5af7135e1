// The monolithic baseline of a multimodal plan -- the Megatron-LM way: one layout for the whole
// model, the encoders and projectors inside the first pipeline stage and the generator inside the
// last, under the backbone's tp and dp. Each data-parallel replica runs its own micro-batches,
// whose media differ, so the slowest replica sets the step.
#pragma once

#include <cstdint>
#include <vector>

#include "hardware/cluster.h"
#include "model/flops.h"
#include "model/multimodal_spec.h"
#include "plan/data_mix.h"
#include "plan/plan.h"
#include "search/multimodal_planner.h"

namespace tessera {

// The monolithic step for one backbone layout, with the modules under `module_recompute`. Only the
// `max_replicas` replicas with the most module work are simulated (all when 0). fits == false
// when a stage runs out of memory.
MultimodalPlan monolithic_plan(const MultimodalSpec& model, const Cluster& cluster,
                               const std::vector<PackedSequence>& sequences, const Plan& plan, const Workload& workload,
                               double memory_limit_bytes, Recompute module_recompute, std::int64_t max_replicas);

// The same with only the non-backbone modules where `folded[i]` holds inside the stages (one flag
// per module of `model`); the others are left out of the pipeline, its memory and its gradient
// syncs, with an empty placement (gpus 0): the backbone phase of a colocated plan
// (search/colocated_plan.h), which runs them in phases of their own. All true is monolithic_plan.
MultimodalPlan folded_pipeline_plan(const MultimodalSpec& model, const Cluster& cluster,
                                    const std::vector<PackedSequence>& sequences, const Plan& plan,
                                    const Workload& workload, double memory_limit_bytes, Recompute module_recompute,
                                    std::int64_t max_replicas, const std::vector<bool>& folded);

// Layouts tried for one backbone plan: the plan itself and, under plain 1F1B, the same plan with a
// lighter first stage (Megatron's --decoder-first-pipeline-num-layers) that makes room for the
// encoders there.
std::vector<Plan> monolithic_layouts(const Plan& plan, std::int64_t layers);

}  // namespace tessera
