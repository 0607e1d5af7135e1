#include "hardware/measured_gemm.h"

#include <algorithm>
#include <cmath>

namespace tessera {

std::array<double, 3> octaves_smallest_first(double m, double n, double k) {
  std::array<double, 3> out = {std::log2(m), std::log2(n), std::log2(k)};
  std::sort(out.begin(), out.end());
  return out;
}

MeasuredGemm::MeasuredGemm(double m_, double n_, double k_, bool fp8_, double tflops_)
    : m(m_), n(n_), k(k_), fp8(fp8_), tflops(tflops_), octaves(octaves_smallest_first(m_, n_, k_)),
      log_time_s(std::log(2.0 * m_ * n_ * k_ / (tflops_ * 1e12))) {}

}  // namespace tessera
