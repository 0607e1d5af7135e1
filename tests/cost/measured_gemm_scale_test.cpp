// A GPU's measured GEMMs price the shapes at and near them (cost/measured_gemm_scale.h): a measured
// shape at its measurement, its permutations (the backward's GEMMs) alike, a shape between two
// measured ones at the distance-weighted mean of their log ratios, repeats at their geometric mean,
// and a shape far from every measurement (or of the other precision) at the curve.
#include "cost/measured_gemm_scale.h"

#include <cmath>

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "common/relative_error.h"
#include "core/error.h"
#include "cost/compute_cost.h"

namespace tessera {
namespace {

using testing::rel_err;

double measured_time_s(double m, double n, double k, double tflops) { return 2.0 * m * n * k / (tflops * 1e12); }

// A measured shape's weight d octaves away (measured_gemm_scale.h), and the curve's.
double weight(double d) {
  return std::exp(-d * d / 2.0) / (d * d + kSameShapeOctaves * kSameShapeOctaves);
}
double curve_weight() { return weight(kCurveWeightAtReaches); }

GpuSpec h200_with(std::vector<MeasuredGemm> rows) {
  GpuSpec gpu = find_gpu("h200");
  gpu.measured_gemms = std::move(rows);
  gpu.validate();
  return gpu;
}

// The H200's logits GEMM of Llama 3.2 1B at 16,384 tokens: 566.5 TFLOP/s measured
// (../shared/validation/h200/gemm.csv), about 10% below the catalog curve.
const MeasuredGemm kLogits{16384, 128256, 2048, false, 566.5};

TEST(MeasuredGemmScale, NoMeasurementsLeaveTheCurve) {
  const GpuSpec gpu = find_gpu("h200");
  EXPECT_EQ(measured_gemm_time_scale(4096, 4096, 4096, false, gpu), 1.0);
  EXPECT_EQ(gemm_time_s(4096, 4096, 4096, 3.0, gpu, false), 3.0 * curve_gemm_time_s(4096, 4096, 4096, gpu, false));
}

TEST(MeasuredGemmScale, AMeasuredShapeIsPricedAtItsMeasurement) {
  const GpuSpec gpu = h200_with({kLogits});
  const double measured_s = measured_time_s(kLogits.m, kLogits.n, kLogits.k, kLogits.tflops);
  const double curve_s = curve_gemm_time_s(kLogits.m, kLogits.n, kLogits.k, gpu, false);
  ASSERT_GT(measured_s / curve_s, 1.05);  // the shape is off the curve: the test can tell them apart
  // The measurement carries all but 3e-6 of the weight.
  const double expected_s = curve_s * std::pow(measured_s / curve_s, weight(0) / (weight(0) + curve_weight()));
  EXPECT_LT(rel_err(gemm_time_s(kLogits.m, kLogits.n, kLogits.k, 1.0, gpu, false), expected_s), 1e-12);
  EXPECT_LT(rel_err(gemm_time_s(kLogits.m, kLogits.n, kLogits.k, 1.0, gpu, false), measured_s), 1e-5);
  // A neighbour one octave away does not pull it toward its own rate.
  const GpuSpec with_neighbour = h200_with({kLogits, {16384, 128256, 4096, false, 670.4}});
  EXPECT_LT(rel_err(gemm_time_s(kLogits.m, kLogits.n, kLogits.k, 1.0, with_neighbour, false), measured_s), 0.003);
}

TEST(MeasuredGemmScale, ThePermutedShapesOfTheBackwardArePricedAlike) {
  const GpuSpec gpu = h200_with({kLogits});
  const double forward_s = gemm_time_s(kLogits.m, kLogits.n, kLogits.k, 1.0, gpu, false);
  EXPECT_LT(rel_err(gemm_time_s(kLogits.m, kLogits.k, kLogits.n, 1.0, gpu, false), forward_s), 1e-12);  // input gradient
  EXPECT_LT(rel_err(gemm_time_s(kLogits.n, kLogits.k, kLogits.m, 1.0, gpu, false), forward_s), 1e-12);  // weight gradient
}

TEST(MeasuredGemmScale, RepeatsOfAShapeAverageGeometrically) {
  // ../shared/validation/h200/gemm.csv timed 4096^3 twice: 748.0 and 649.4 TFLOP/s.
  const GpuSpec gpu = h200_with({{4096, 4096, 4096, false, 748.0}, {4096, 4096, 4096, false, 649.4}});
  const double curve_s = curve_gemm_time_s(4096, 4096, 4096, gpu, false);
  const double log_ratios = std::log(measured_time_s(4096, 4096, 4096, 748.0) / curve_s) +
                            std::log(measured_time_s(4096, 4096, 4096, 649.4) / curve_s);
  const double expected = std::exp(weight(0) * log_ratios / (2.0 * weight(0) + curve_weight()));
  EXPECT_LT(rel_err(measured_gemm_time_scale(4096, 4096, 4096, false, gpu), expected), 1e-12);
}

TEST(MeasuredGemmScale, AShapeBetweenTwoMeasuredOnesTakesTheirWeightedMean) {
  // m = 8,192 is one octave from both measured m = 4,096 and 16,384: the same weight each.
  const MeasuredGemm low{4096, 16384, 2048, false, 581.1}, high{16384, 16384, 2048, false, 673.0};
  const GpuSpec gpu = h200_with({low, high});
  const auto log_ratio = [&](const MeasuredGemm& g) {
    return std::log(measured_time_s(g.m, g.n, g.k, g.tflops) / curve_gemm_time_s(g.m, g.n, g.k, gpu, false));
  };
  const double w = weight(1.0);
  const double expected = std::exp(w * (log_ratio(low) + log_ratio(high)) / (2.0 * w + curve_weight()));
  EXPECT_LT(rel_err(measured_gemm_time_scale(8192, 16384, 2048, false, gpu), expected), 1e-12);
}

TEST(MeasuredGemmScale, FarShapesAndTheOtherPrecisionKeepTheCurve) {
  const GpuSpec gpu = h200_with({kLogits});
  // 16x smaller in every dimension: 6.9 octaves away, beyond the four reaches a row is counted.
  EXPECT_EQ(measured_gemm_time_scale(1024, 8016, 128, false, gpu), 1.0);
  EXPECT_EQ(measured_gemm_time_scale(kLogits.m, kLogits.n, kLogits.k, true, gpu), 1.0);  // an fp8 GEMM
  // Three octaves along one dimension: the measurement and the curve weigh the same.
  const double at = measured_gemm_time_scale(kLogits.m, kLogits.n, kLogits.k, false, gpu);
  const double three_octaves = measured_gemm_time_scale(kLogits.m / 8, kLogits.n, kLogits.k, false, gpu);
  const double log_ratio = std::log(at) * (weight(0) + curve_weight()) / weight(0);
  EXPECT_LT(rel_err(std::log(three_octaves), log_ratio / 2.0), 1e-9);
}

// Guards of the three constants, in numbers a 20% move of any of them breaks: three octaves from
// the one measured shape the measurement carries half of its log ratio (kCurveWeightAtReaches 3.6
// or a reach of 1.2 octaves would leave 91% or 85%), and a measured shape's neighbour one octave
// away takes 0.15% of its price (exp(-1/2) / 1.0025 against 1 / 0.05^2; a same-shape width of
// 0.06 octave would make it 0.22%).
TEST(MeasuredGemmScale, GuardTheReachTheSameShapeWidthAndTheCurvesWeight) {
  const GpuSpec gpu = h200_with({kLogits});
  const double at = std::log(measured_gemm_time_scale(kLogits.m, kLogits.n, kLogits.k, false, gpu));
  const double three_octaves = std::log(measured_gemm_time_scale(kLogits.m / 8, kLogits.n, kLogits.k, false, gpu));
  EXPECT_NEAR(three_octaves / at, 0.5, 0.02);
  const MeasuredGemm neighbour{16384, 128256, 4096, false, 670.4};
  const GpuSpec both = h200_with({kLogits, neighbour});
  const double alone = std::log(measured_gemm_time_scale(kLogits.m, kLogits.n, kLogits.k, false, h200_with({neighbour})));
  const double own = at, mixed = std::log(measured_gemm_time_scale(kLogits.m, kLogits.n, kLogits.k, false, both));
  // mixed = (W0 own' + W1 r1) / (W0 + W1 + c), own' and r1 the two rows' log ratios; the
  // neighbour's share W1 / (W0 + W1) is recovered from the three prices.
  const double r1 = alone * (weight(1.0) + curve_weight()) / weight(1.0);
  const double own_ratio = own * (weight(0) + curve_weight()) / weight(0);
  const double share = (mixed - own_ratio) / (r1 - own_ratio);
  EXPECT_NEAR(share, 0.0015, 0.0003);
}

TEST(MeasuredGemmScale, ARowFasterThanThePeakOrOfNoShapeIsRefused) {
  EXPECT_THROW(h200_with({{4096, 4096, 4096, false, 1000.0}}), Error);  // above the 989.4 TFLOP/s peak
  EXPECT_THROW(h200_with({{0, 4096, 4096, false, 500.0}}), Error);
  EXPECT_THROW(h200_with({{4096.5, 4096, 4096, false, 500.0}}), Error);
  GpuSpec no_fp8 = find_gpu("a100-sxm-80gb");
  no_fp8.measured_gemms = {{4096, 4096, 4096, true, 100.0}};
  EXPECT_THROW(no_fp8.validate(), Error);
}

}  // namespace
}  // namespace tessera
