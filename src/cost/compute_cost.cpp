#include "cost/compute_cost.h"

#include <algorithm>
#include <cmath>

#include "core/units.h"
#include "cost/measured_gemm_scale.h"
#include "hardware/physical_ranges.h"

namespace tessera {

namespace {
double saturation(double d, double half) { return d / (d + half); }
}  // namespace

double gemm_efficiency(double m, double n, double k, const GpuSpec& gpu, bool fp8) {
  const double peak_fraction = fp8 ? gpu.fp8_gemm_efficiency : gpu.gemm_efficiency;
  const double half = gpu.gemm_half_dim;
  return peak_fraction * saturation(m, half) * saturation(n, half) * saturation(k, half);
}

double curve_gemm_time_s(double m, double n, double k, const GpuSpec& gpu, bool fp8) {
  const double flops = 2.0 * m * n * k;
  const double compute_s = flops / (gpu.peak_flops(fp8) * gemm_efficiency(m, n, k, gpu, fp8));
  const double element_bytes = fp8 ? units::kBytesFp8 : units::kBytesBf16;
  const double bytes = element_bytes * (m * k + k * n) + units::kBytesBf16 * m * n;
  const double memory_s = bytes / (gpu.hbm_tbps * 1e12 * gpu.hbm_efficiency);
  return std::max(compute_s, memory_s) + gpu.kernel_overhead_s;
}

double gemm_time_s(double m, double n, double k, double count, const GpuSpec& gpu, bool fp8) {
  if (m <= 0 || n <= 0 || k <= 0 || count <= 0) return 0.0;
  return count * curve_gemm_time_s(m, n, k, gpu, fp8) * measured_gemm_time_scale(m, n, k, fp8, gpu);
}

double grouped_gemm_time_s(double m, double n, double k, double groups, const GpuSpec& gpu, bool fp8) {
  if (m <= 0 || n <= 0 || k <= 0 || groups <= 0) return 0.0;
  const double rows = m * groups;
  const double flops = 2.0 * rows * n * k;
  const double compute_s = flops / (gpu.peak_flops(fp8) * gemm_efficiency(rows, n, k, gpu, fp8));
  const double element_bytes = fp8 ? units::kBytesFp8 : units::kBytesBf16;
  const double bytes = element_bytes * (rows * k + groups * k * n) + units::kBytesBf16 * rows * n;
  const double memory_s = bytes / (gpu.hbm_tbps * 1e12 * gpu.hbm_efficiency);
  return std::max(compute_s, memory_s) + gpu.kernel_overhead_s;
}

double attention_efficiency(const AttentionCall& call, const GpuSpec& gpu) {
  double eff = gpu.attention_efficiency;
  if (gpu.attention_half_seq > 0) eff *= saturation(call.seq, gpu.attention_half_seq);
  if (gpu.attention_half_tiles > 0)
    eff *= saturation(call.batch_heads * call.seq / static_cast<double>(kAttentionQueryTileRows), gpu.attention_half_tiles);
  if (gpu.attention_half_head_dim > 0) eff *= saturation(call.head_dim, gpu.attention_half_head_dim);
  return eff;
}

double attention_time_s(double flops, const AttentionCall& call, const GpuSpec& gpu) {
  if (flops <= 0 || call.batch_heads <= 0 || call.seq <= 0) return 0.0;
  return flops / (gpu.peak_flops(false) * attention_efficiency(call, gpu)) + gpu.kernel_overhead_s;
}

double memory_bound_time_s(double bytes, const GpuSpec& gpu) {
  if (bytes <= 0) return 0.0;
  return bytes / (gpu.hbm_tbps * 1e12 * gpu.hbm_efficiency);
}

double host_bound_time_s(double gpu_s, double host_s, double exponent) {
  if (host_s <= 0) return gpu_s;
  const double hi = std::max(gpu_s, host_s), lo = std::min(gpu_s, host_s);
  if (lo <= 0 || exponent >= physical::kMaxHostOverlapExponent) return hi;  // the plain maximum
  return hi * std::pow(1.0 + std::pow(lo / hi, exponent), 1.0 / exponent);
}

}  // namespace tessera
