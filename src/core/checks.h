// Validation helpers shared by every value type's validate(): each throws tessera::Error naming
// the field and the allowed range. Nothing is clamped.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <string>

#include "core/error.h"

namespace tessera {

// Upper bound for any count Tessera accepts (layers, GPUs, tokens): far beyond any real job, small
// enough that products of a few such counts stay exact in double and int64.
inline constexpr std::int64_t kMaxCount = 1'000'000'000'000LL;

inline void require_positive(const std::string& field, std::int64_t value,
                             std::int64_t max = kMaxCount) {
  if (value < 1 || value > max)
    throw Error(field, "got " + std::to_string(value),
                "an integer from 1 to " + std::to_string(max));
}

inline void require_non_negative(const std::string& field, std::int64_t value,
                                 std::int64_t max = kMaxCount) {
  if (value < 0 || value > max)
    throw Error(field, "got " + std::to_string(value),
                "an integer from 0 to " + std::to_string(max));
}

// A real as the user would write it: %g keeps 1e-308 and 1e+300 readable, where std::to_string
// prints both as a useless 0.000000 or a 300-digit integer.
inline std::string number_text(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.6g", value);
  return buffer;
}

inline void require_positive_real(const std::string& field, double value, double max) {
  if (!std::isfinite(value) || value <= 0.0 || value > max)
    throw Error(field, "got " + number_text(value),
                "a number greater than 0 and at most " + number_text(max));
}

inline void require_non_negative_real(const std::string& field, double value, double max) {
  if (!std::isfinite(value) || value < 0.0 || value > max)
    throw Error(field, "got " + number_text(value), "a number from 0 to " + number_text(max));
}

// A physical quantity between generous bounds (see hardware/physical_ranges.h): a value outside
// them is a unit slip or garbage, and letting it through yields infinite or denormal times.
inline void require_in_range(const std::string& field, double value, double min, double max,
                             const std::string& unit) {
  if (!std::isfinite(value) || value < min || value > max)
    throw Error(field, "got " + number_text(value),
                "a number from " + number_text(min) + " to " + number_text(max) +
                    (unit.empty() ? "" : " " + unit));
}

inline void require_fraction(const std::string& field, double value) {
  if (!std::isfinite(value) || value <= 0.0 || value > 1.0)
    throw Error(field, "got " + number_text(value), "a number in (0, 1]");
}

// Product of counts, saturating at kMaxCount instead of overflowing (degrees of a plan can each
// be up to a million; their product is compared with the GPU count).
inline std::int64_t saturating_product(std::initializer_list<std::int64_t> values) {
  std::int64_t product = 1;
  for (std::int64_t v : values) {
    if (v <= 0) return 0;
    if (product > kMaxCount / v) return kMaxCount;
    product *= v;
  }
  return product;
}

}  // namespace tessera
