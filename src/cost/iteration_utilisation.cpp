#include "cost/iteration_utilisation.h"

#include "core/units.h"
#include "cost/adapter_cost.h"
#include "cost/layer_streaming.h"
#include "model/flops.h"

namespace tessera {

void set_flops_and_utilisation(Estimate& e, const ModelSpec& m, const Plan& p, const Workload& w,
                               const LayerSplit& split, const GpuSpec& gpu) {
  const double gpus = static_cast<double>(p.gpus());
  IterationFlops flops = iteration_flops(m, w.tokens(), w.seq_len, p.recompute);
  if (p.recompute == Recompute::full && p.recompute_layers > 0) {
    std::int64_t recomputed = 0;
    for (std::int64_t k = 0; k < split.virtual_stages; ++k) recomputed += p.recomputed_layers(split.virtual_stage_layers(k));
    flops.recompute *= static_cast<double>(recomputed) / static_cast<double>(m.layers);
  }
  if (p.framework == TrainingFramework::megatrain) flops.recompute *= kMegatrainForwardPasses - 1.0;
  if (p.tuning.adapters()) flops = adapter_iteration_flops(flops, m, p.tuning, w.tokens(), w.seq_len);
  e.model_flops = flops.model();
  e.hardware_flops = flops.hardware();
  e.tokens_per_s = w.tokens() / e.iteration_time_s;
  e.model_tflops_per_gpu = e.model_flops / (e.iteration_time_s * gpus) / units::kTera;
  e.hardware_tflops_per_gpu = e.hardware_flops / (e.iteration_time_s * gpus) / units::kTera;
  const double peak = gpu.peak_flops(false);  // the 16-bit dense peak, FP8 plans too (estimate.h)
  e.mfu = e.model_flops / (e.iteration_time_s * gpus * peak);
  e.hfu = e.hardware_flops / (e.iteration_time_s * gpus * peak);
  e.mfu_fp8_peak = p.precision == Precision::fp8 ? e.model_flops / (e.iteration_time_s * gpus * gpu.peak_flops(true)) : 0.0;
}

}  // namespace tessera
