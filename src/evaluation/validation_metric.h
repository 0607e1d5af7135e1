// A validation row's measurement in its own metric (../shared/validation/README.md §2) against
// the model's predicted step: the measured value as a step time, and the prediction in the metric.
#pragma once

#include <cstdint>
#include <string>

#include "hardware/gpu_spec.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

struct InMetric {
  double measured_time_s = 0;  // the measured value as an iteration time
  double predicted = 0;        // the predicted iteration time in the row's metric
};

// metric: iter_time_s, tflops_per_gpu_megatron (SC'21 eq. 3 FLOPs), mfu_pct (Megatron-Core's
// model FLOPs against the GPU's peak at the row's precision) or tokens_per_s_per_gpu. Throws
// Error("csv.measured_metric") for another, Error("csv.measured_value") when the measurement is
// a step outside physical::kMinStepTimeS .. kMaxStepTimeS.
InMetric in_metric(const std::string& metric, double measured, const ModelSpec& model, const GpuSpec& gpu,
                   Precision precision, const Workload& w, std::int64_t gpus, double predicted_s);

}  // namespace tessera
