// SeededRandom: Tessera's one source of randomness (data mixes, the balancer's samples and shuffles). The engine is std::mt19937_64, whose
// output sequence the C++ standard fixes; the conversions to uniform and normal numbers are
// written out here (the standard library's distributions differ between implementations), so a
// seed gives the same samples and the same shuffles on every platform and in every process.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <span>

namespace tessera {

class SeededRandom {
 public:
  explicit SeededRandom(std::uint64_t seed) : engine_(seed) {}

  // Uniform on [0, 1): the top 53 bits of one draw.
  double uniform() { return static_cast<double>(engine_() >> kDiscardedBits) * kUnitPerStep; }
  // Standard normal by the Box-Muller transform (Box & Muller 1958), one value per two draws.
  double normal() {
    const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
    const double u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
  }
  // Log-normal with the given median (e^mu) and sigma of the underlying normal.
  double lognormal(double median, double sigma) { return median * std::exp(sigma * normal()); }
  // Uniform integer in [0, n), n >= 1; the modulo bias is below n / 2^64.
  std::uint64_t below(std::uint64_t n) { return engine_() % n; }
  // Fisher-Yates shuffle (Knuth, TAOCP vol. 2, Algorithm P).
  template <typename T>
  void shuffle(std::span<T> values) {
    for (std::size_t i = values.size(); i > 1; --i) {
      const std::size_t j = static_cast<std::size_t>(below(i));
      std::swap(values[i - 1], values[j]);
    }
  }

 private:
  static constexpr int kDiscardedBits = 11;            // 64 - 53 mantissa bits
  static constexpr double kUnitPerStep = 0x1.0p-53;  // 2^-53
  std::mt19937_64 engine_;
};

}  // namespace tessera
