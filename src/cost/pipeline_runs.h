// The pipeline simulations the cost model runs (cost_model.cpp's simulated path): inputs and a
// simulator reused per thread (the planner estimates in parallel, and a simulation allocates
// only when a shape grows), and a memo of makespans (the planner re-scores the same pipelines).
#pragma once

#include "schedule/pipeline_simulator.h"

namespace tessera {

// This thread's simulation inputs, to fill and pass to the functions below.
PipelineCosts& thread_simulation_costs();

// This thread's simulator, for callers that simulate costs of their own (the multimodal planner):
// one per thread, reused, so its programs and buffers are built once per pipeline shape.
PipelineSimulator& thread_pipeline_simulator();

// The full timeline (for `estimate --trace` and the reports); returns the makespan with the
// gradient sync and sets pipeline_s to the pipeline's alone.
double simulate_into(const PipelineCosts& costs, Timeline& timeline, double& pipeline_s);

// The same two times, memoised per thread by a 64-bit FNV-1a hash of the schedule, the shape and
// every cost (costs uniform over micro-batches: one value per virtual stage is hashed).
double memoised_makespan(const PipelineCosts& costs, double& pipeline_s);

}  // namespace tessera
