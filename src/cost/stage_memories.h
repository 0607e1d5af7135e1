// Every pipeline stage's memory, stage 0 first: the per-stage bars of a report. estimate() keeps
// only the peak stage's breakdown (it must not allocate when ranking plans); this is the full
// list, computed by the same IterationModel (defined in cost_model.cpp, beside it).
#pragma once

#include <vector>

#include "cost/estimate.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// Preconditions as estimate(). The entry of estimate().peak_memory_stage equals estimate().memory.
std::vector<MemoryBreakdown> stage_memories(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                                            const Workload& workload);

}  // namespace tessera
