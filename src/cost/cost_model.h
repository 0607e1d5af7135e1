// CostModel: the time and memory of one training iteration for a plan.
//
// Two paths share every term but the pipeline's:
//   estimate()             simulates the plan's pipeline event by event (schedule/pipeline_simulator.h),
//                          memoised per thread; what `tessera estimate` prints
//   estimate_analytical()  the closed form m t_max + (sum t - t_max) / v; pure, allocation-free,
//                          for ranking millions of candidate plans
// Neither does I/O or logging.
#pragma once

#include "cost/estimate.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"
#include "schedule/pipeline_simulator.h"

namespace tessera {

enum class PipelineModel { closed_form, simulated };

// Preconditions: model, cluster, workload validated and validate_plan() passed.
Estimate estimate(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                  const Workload& workload);
Estimate estimate_analytical(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                             const Workload& workload);
// estimate() that also returns the simulated timeline of the iteration (for traces).
Estimate estimate_with_timeline(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                                const Workload& workload, Timeline& timeline);

// What estimate() hands the pipeline simulator for a plan -- per virtual stage and micro-batch
// forward / backward times, p2p per boundary, gradient sync per stage -- and the time it adds
// after the simulated makespan (optimizer step, DP traffic outside the sync). Callers that make
// micro-batches uneven (multimodal encoders on the first stage) change the costs and re-simulate.
struct PipelineInputs {
  PipelineCosts costs;
  double tail_s = 0;
};
Estimate estimate_with_pipeline_inputs(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                                       const Workload& workload, PipelineInputs& inputs);

}  // namespace tessera
