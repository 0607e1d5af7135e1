#include "hardware/measured_gemm.h"

#include <algorithm>
#include <cmath>

namespace tessera {

MeasuredGemm::MeasuredGemm(double m_, double n_, double k_, bool fp8_, double tflops_)
    : m(m_), n(n_), k(k_), fp8(fp8_), tflops(tflops_), octaves{std::log2(m_), std::log2(n_), std::log2(k_)},
      log_time_s(std::log(2.0 * m_ * n_ * k_ / (tflops_ * 1e12))) {
  std::sort(octaves.begin(), octaves.end());
}

}  // namespace tessera
