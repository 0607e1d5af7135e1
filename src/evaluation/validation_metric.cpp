#include "evaluation/validation_metric.h"

#include <fmt/core.h>

#include "core/error.h"
#include "hardware/physical_ranges.h"

namespace tessera {

namespace {

// SC'21 (Narayanan et al., arXiv 2104.04473) eq. 3: FLOPs of one iteration with full recompute.
double sc21_flops(double B, double s, double l, double h, double V) {
  return 96.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (16.0 * l * h));
}

// Megatron-Core's model FLOPs (validation README §2.3) with the row's fields.
double megatron_core_flops(const ModelSpec& model, double B, double s) {
  const double l = static_cast<double>(model.layers), h = static_cast<double>(model.hidden);
  const double a = static_cast<double>(model.heads), g = static_cast<double>(model.kv_heads);
  const double d = static_cast<double>(model.head_dim), V = static_cast<double>(model.vocab);
  const bool moe = model.is_moe();
  const double f = moe ? static_cast<double>(model.moe.expert_ffn_hidden) : static_cast<double>(model.ffn_hidden);
  const double k = moe ? static_cast<double>(model.moe.top_k) : 1.0;
  const double mlp_factor = model.mlp == MlpType::swiglu ? 1.5 : 1.0;
  return 12.0 * B * s * l * h * h * ((1.0 + g / a + s / h) * (a * d / h) + (f / h) * k * mlp_factor + V / (2.0 * l * h));
}

}  // namespace

InMetric in_metric(const std::string& metric, double measured, const ModelSpec& model, const GpuSpec& gpu,
                   Precision precision, const Workload& w, std::int64_t gpus, double predicted_s) {
  const double T = predicted_s;
  const double B = static_cast<double>(w.global_batch), s = static_cast<double>(w.seq_len);
  const double nd = static_cast<double>(gpus);
  InMetric m;
  if (metric == "iter_time_s") {
    m.measured_time_s = measured;
    m.predicted = T;
  } else if (metric == "tflops_per_gpu_megatron") {
    const double F = sc21_flops(B, s, static_cast<double>(model.layers), static_cast<double>(model.hidden),
                                static_cast<double>(model.vocab));
    m.measured_time_s = F / (measured * 1e12 * nd);
    m.predicted = F / (T * nd) / 1e12;
  } else if (metric == "mfu_pct") {
    const double F = megatron_core_flops(model, B, s);
    const double P = gpu.peak_flops(precision == Precision::fp8);
    m.measured_time_s = F / (measured / 100.0 * nd * P);
    m.predicted = 100.0 * F / (T * nd * P);
  } else if (metric == "tokens_per_s_per_gpu") {
    m.measured_time_s = B * s / (measured * nd);
    m.predicted = B * s / (T * nd);
  } else {
    throw Error("csv.measured_metric", "unknown metric '" + metric + "'",
                "iter_time_s, tflops_per_gpu_megatron, mfu_pct, tokens_per_s_per_gpu");
  }
  if (!(m.measured_time_s >= physical::kMinStepTimeS && m.measured_time_s <= physical::kMaxStepTimeS))
    throw Error("csv.measured_value", fmt::format("{:g} ({}) is a step of {:g} s", measured, metric, m.measured_time_s),
                fmt::format("a measurement whose step time is {:g} to {:g} s", physical::kMinStepTimeS,
                            physical::kMaxStepTimeS));
  return m;
}

}  // namespace tessera
