#include "hardware/gpu_spec.h"

#include <cmath>

#include "core/checks.h"
#include "hardware/physical_ranges.h"

namespace tessera {

namespace {
using namespace physical;

void require_efficiency(const std::string& field, double value) {
  require_in_range(field, value, kMinEfficiency, kMaxEfficiency, "(a fraction of the peak)");
}

// A refittable speed relative to the model's own rate (1 = as modelled), may exceed 1.
void require_relative_efficiency(const std::string& field, double value, double max) {
  require_in_range(field, value, kMinRelativeEfficiency, max, "(speed relative to the model, 1 = as modelled)");
}

void require_fixed_time(const std::string& field, double value) {
  require_in_range(field, value, kMinFixedTimeS, kMaxFixedTimeS, "s");
}

// Host dispatch: 0 (no eager operators) or a fixed time as above; a denormal is neither.
void require_host_dispatch_time(const std::string& field, double value) {
  if (value == 0.0) return;
  if (!std::isfinite(value) || value < kMinFixedTimeS || value > kMaxFixedTimeS)
    throw Error(field, "got " + number_text(value),
                "0 (a graph-captured model) or a number from " + number_text(kMinFixedTimeS) + " to " +
                    number_text(kMaxFixedTimeS) + " s");
}
// A measured GEMM: whole positive dimensions, a throughput up to the peak of its precision.
void require_measured_gemm(const std::string& field, const MeasuredGemm& g, const GpuSpec& gpu) {
  for (const double d : {g.m, g.n, g.k})
    if (!std::isfinite(d) || d < 1 || std::floor(d) != d)
      throw Error(field, "dimension " + number_text(d), "whole numbers >= 1 (m, n, k)");
  if (g.fp8 && gpu.fp8_tflops <= 0) throw Error(field + ".dtype", "fp8 on a GPU without an FP8 peak", "bf16");
  require_in_range(field + ".tflops", g.tflops, kMinTflops, gpu.peak_flops(g.fp8) / 1e12, "TFLOP/s (up to the peak)");
}
}  // namespace

void GpuSpec::validate() const {
  if (key.empty()) throw Error("gpu.key", "empty", "a catalog key such as h100-sxm-80gb");
  for (const auto& alias : aliases)
    if (alias.empty()) throw Error("gpu." + key + ".aliases", "an empty alias", "non-empty names");
  const std::string p = "gpu." + key + ".";
  require_in_range(p + "bf16_tflops", bf16_tflops, kMinTflops, kMaxTflops, "TFLOP/s");
  if (fp8_tflops != 0) require_in_range(p + "fp8_tflops", fp8_tflops, kMinTflops, kMaxTflops, "TFLOP/s (0: none)");
  require_in_range(p + "hbm_gib", hbm_gib, kMinMemoryGib, kMaxMemoryGib, "GiB");
  require_in_range(p + "hbm_tbps", hbm_tbps, kMinHbmTbps, kMaxHbmTbps, "TB/s");
  require_in_range(p + "nvlink_gbps", nvlink_gbps, kMinBandwidthGbps, kMaxBandwidthGbps, "GB/s");
  require_positive(p + "gpus_per_node", gpus_per_node, kMaxGpusPerNode);
  require_in_range(p + "network_gbps_per_gpu", network_gbps_per_gpu, kMinBandwidthGbps, kMaxBandwidthGbps, "Gbit/s");
  require_efficiency(p + "gemm_efficiency", gemm_efficiency);
  require_efficiency(p + "fp8_gemm_efficiency", fp8_gemm_efficiency);
  require_in_range(p + "gemm_half_dim", gemm_half_dim, kMinGemmHalfDim, kMaxGemmHalfDim, "elements");
  require_efficiency(p + "attention_efficiency", attention_efficiency);
  if (attention_half_seq != 0)
    require_in_range(p + "attention_half_seq", attention_half_seq, kMinGemmHalfDim, kMaxGemmHalfDim, "keys (0: none)");
  if (attention_half_head_dim != 0)
    require_in_range(p + "attention_half_head_dim", attention_half_head_dim, kMinGemmHalfDim, kMaxGemmHalfDim,
                     "head widths (0: none)");
  if (attention_half_tiles != 0)
    require_in_range(p + "attention_half_tiles", attention_half_tiles, kMinGemmHalfDim, kMaxGemmHalfDim,
                     "query tiles (0: none)");
  require_efficiency(p + "hbm_efficiency", hbm_efficiency);
  require_efficiency(p + "nvlink_efficiency", nvlink_efficiency);
  require_efficiency(p + "network_efficiency", network_efficiency);
  require_in_range(p + "usable_memory_gib", usable_memory_gib, kMinMemoryGib, hbm_gib, "GiB, at most hbm_gib");
  require_fixed_time(p + "kernel_overhead_s", kernel_overhead_s);
  require_host_dispatch_time(p + "host_op_dispatch_s", host_op_dispatch_s);
  require_fixed_time(p + "nvlink_latency_s", nvlink_latency_s);
  require_fixed_time(p + "network_latency_s", network_latency_s);
  require_relative_efficiency(p + "all_to_all_efficiency", all_to_all_efficiency, kMaxAllToAllEfficiency);
  require_relative_efficiency(p + "moe_dispatch_efficiency", moe_dispatch_efficiency, kMaxMoeDispatchEfficiency);
  require_in_range(p + "host_overlap_exponent", host_overlap_exponent, kMinHostOverlapExponent,
                   kMaxHostOverlapExponent, "(1 = host and GPU never overlap; large = max(gpu, host))");
  require_in_range(p + "memory_reserve_gib", memory_reserve_gib, -kMaxNegativeReserveGib, hbm_gib,
                   "GiB beyond the modelled reserve (at least minus the CUDA context + workspaces, at most hbm_gib)");
  for (std::size_t i = 0; i < measured_gemms.size(); ++i)
    require_measured_gemm(p + "measured_gemms[" + std::to_string(i) + "]", measured_gemms[i], *this);
  host.validate();
}

}  // namespace tessera
