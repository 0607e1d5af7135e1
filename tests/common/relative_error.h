// |got - want| / |want|: the relative error the cost tests compare closed forms with.
#pragma once

#include <cmath>

namespace tessera::testing {

inline double rel_err(double got, double want) { return std::fabs(got - want) / std::fabs(want); }

}  // namespace tessera::testing
