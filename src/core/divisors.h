// Divisors of a count, the building block of every search over parallel degrees.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tessera {

// The divisors of n that are at most `limit`, ascending.
inline std::vector<std::int64_t> divisors(std::int64_t n, std::int64_t limit) {
  std::vector<std::int64_t> out;
  for (std::int64_t d = 1; d <= std::min(n, limit); ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

}  // namespace tessera
