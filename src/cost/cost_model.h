// CostModel: the time and memory of one training iteration for a plan. A pure function: no
// allocation, no I/O, no logging (the planner calls it millions of times).
#pragma once

#include "cost/estimate.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// Preconditions: model, cluster, workload validated and validate_plan() passed.
Estimate estimate(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                  const Workload& workload);

}  // namespace tessera
