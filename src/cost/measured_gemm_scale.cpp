#include "cost/measured_gemm_scale.h"

#include <array>
#include <cmath>

#include "cost/compute_cost.h"

namespace tessera {

namespace {

using Octaves = std::array<double, 3>;

double squared_distance(const Octaves& a, const Octaves& b) {
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) sum += (a[i] - b[i]) * (a[i] - b[i]);
  return sum;
}

// Beyond four reaches a row's weight is below the curve's by 50x: skipped.
constexpr double kIgnoredBeyondReaches = 4.0;
constexpr double kReachSquared = kMeasuredGemmReachOctaves * kMeasuredGemmReachOctaves;
constexpr double kIgnoredBeyondSquared = kIgnoredBeyondReaches * kIgnoredBeyondReaches * kReachSquared;

// ln(measured time / the curve's time) of one measured GEMM.
double measured_log_ratio(const MeasuredGemm& row, const GpuSpec& gpu) {
  return row.log_time_s - std::log(curve_gemm_time_s(row.m, row.n, row.k, gpu, row.fp8));
}

}  // namespace

double measured_gemm_weight(double squared_octaves) {
  return std::exp(-squared_octaves / (2.0 * kReachSquared)) / (squared_octaves + kSameShapeOctaves * kSameShapeOctaves);
}

double measured_gemm_time_scale(double m, double n, double k, bool fp8, const GpuSpec& gpu) {
  if (gpu.measured_gemms.empty()) return 1.0;
  // The curve's weight, computed once.
  static const double curve_weight = measured_gemm_weight(kCurveWeightAtReaches * kCurveWeightAtReaches * kReachSquared);
  const Octaves asked = octaves_smallest_first(m, n, k);
  double weighted_log_ratio = 0;
  double weights = curve_weight;
  for (const MeasuredGemm& row : gpu.measured_gemms) {
    if (row.fp8 != fp8) continue;
    const double d2 = squared_distance(asked, row.octaves);
    if (d2 > kIgnoredBeyondSquared) continue;
    const double w = measured_gemm_weight(d2);
    weighted_log_ratio += w * measured_log_ratio(row, gpu);
    weights += w;
  }
  return std::exp(weighted_log_ratio / weights);
}

}  // namespace tessera
