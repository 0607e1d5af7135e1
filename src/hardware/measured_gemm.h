// One GEMM timed on a GPU (a probe's or `calibrate --gemm`'s row): its shape, precision and the
// throughput it ran at. A calibration profile keeps the dense rows it was fitted on beside the
// fitted curve, and the cost model prices shapes at or near them from the measurement
// (cost/measured_gemm_scale.h): cuBLAS picks a tile configuration per shape, and a shape whose pick
// is poor (the H200 ran 16,384 x 128,256 x 2,048 at 566 TFLOP/s, its neighbours at 670-740) is
// not on any smooth curve.
#pragma once

#include <array>

namespace tessera {

// log2 of a GEMM's dimensions, smallest first: where the measured-GEMM pricing measures distance
// (cost/measured_gemm_scale.h).
std::array<double, 3> octaves_smallest_first(double m, double n, double k);

struct MeasuredGemm {
  double m = 0, n = 0, k = 0;  // (m x k) * (k x n)
  bool fp8 = false;
  double tflops = 0;  // 2 m n k / measured time, TFLOP/s
  // Derived once here, for the pricing's inner loop: log2 of the dimensions, smallest first, and
  // ln of the measured time in seconds. Build rows with the constructor.
  std::array<double, 3> octaves{};
  double log_time_s = 0;

  MeasuredGemm() = default;
  MeasuredGemm(double m, double n, double k, bool fp8, double tflops);
  bool operator==(const MeasuredGemm& o) const {
    return m == o.m && n == o.n && k == o.k && fp8 == o.fp8 && tflops == o.tflops;
  }
};

}  // namespace tessera
