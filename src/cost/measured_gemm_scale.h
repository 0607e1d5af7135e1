// Pricing a GEMM from a GPU's measured GEMMs (GpuSpec::measured_gemms, a calibration profile's):
// the curve of cost/compute_cost.h is scaled by the measured / curve time ratio of the measured
// shapes near the one asked, weighted by their distance. At a measured shape the price is the
// measurement; between measured shapes it moves smoothly from one ratio to the other; far from
// every measurement it is the curve. A GPU with no measured GEMMs keeps the curve (factor 1).
//
// Distance is in octaves (log2) of the three dimensions taken smallest first: the curve is
// symmetric in m, n and k, and a linear layer's backward GEMMs are its forward's shape permuted
// (priced as kGemmBackwardOverForward times the forward), so one measured shape prices all three.
// Rows of the other precision (bf16 / fp8) are ignored.
#pragma once

#include "hardware/gpu_spec.h"

namespace tessera {

// A measured shape at distance d (octaves) weighs exp(-d^2 / 2 s^2) / (d^2 + e^2): inverse-square
// (Shepard's interpolation), so a measured shape is priced at its own measurement and not pulled
// toward its neighbours (the H200's 16,384 x 128,256 x 2,048 ran at 566 TFLOP/s, one octave from
// a 670 TFLOP/s shape), with a Gaussian reach of s = one octave: probe sweeps step each dimension
// by 1.5-4x (../shared/validation/h200/gemm.csv: m 4,096 and 16,384; n, k 2,048-14,336), so a
// plan's shape between two measured ones takes both, and farther rows fade out.
inline constexpr double kMeasuredGemmReachOctaves = 1.0;
// Shapes within e = 0.05 octave (3.5%) in every dimension are one shape: its repeated
// measurements average geometrically (that sweep timed 4096^3 at 748 and 649 TFLOP/s).
inline constexpr double kSameShapeOctaves = 0.05;
// The curve weighs as a measurement three reaches away: three octaves from every measured shape
// the two weigh the same; farther, the curve wins.
inline constexpr double kCurveWeightAtReaches = 3.0;

// The weight of a measured shape `squared_octaves` (d^2) away.
double measured_gemm_weight(double squared_octaves);

// The factor on the curve's time of one (m x k) * (k x n) GEMM of the given precision.
double measured_gemm_time_scale(double m, double n, double k, bool fp8, const GpuSpec& gpu);

}  // namespace tessera
