// An iteration's model and hardware FLOPs, and from its time the throughput and utilisation an
// Estimate reports (MFU and HFU against the 16-bit dense peak, FP8 plans too; estimate.h).
#pragma once

#include "cost/estimate.h"
#include "hardware/gpu_spec.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// Sets e's FLOPs, tokens/s, TFLOP/s per GPU, MFU, HFU and FP8-peak MFU from e.iteration_time_s.
// Recompute FLOPs count the layers the plan recomputes (`split`: a partial full recompute
// recomputes only some layers per virtual stage), twice under MegaTrain, and LoRA's frozen base
// has no weight-gradient GEMMs.
void set_flops_and_utilisation(Estimate& e, const ModelSpec& model, const Plan& plan, const Workload& workload,
                               const LayerSplit& split, const GpuSpec& gpu);

}  // namespace tessera
