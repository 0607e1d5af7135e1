// The parameters `tessera calibrate` may refit: each is one GpuSpec field read by one term of the
// cost model, with physical bounds. The table's order is the fit's priority: when two parameters
// move the predictions the same way (GEMM and attention efficiency on a GEMM-bound model), the
// earlier one is fitted and the later one stays at the catalog value (robust_fit.h,
// select_identifiable).
#pragma once

#include <span>
#include <string_view>

#include "hardware/gpu_spec.h"

namespace tessera {

// What a parameter is fitted from: iteration times of training runs (and GEMM sweeps for the
// GEMM terms), collective benchmarks, or measured peak memory.
enum class ParameterTerm { compute, host, communication, memory };
std::string_view parameter_term_name(ParameterTerm term);

struct CalibrationParameter {
  std::string_view name;       // the GpuSpec / profile field
  double GpuSpec::*field;
  double lower, upper;         // physical bounds of the fitted value
  ParameterTerm term;
  std::string_view cost_term;  // the cost-model term it scales (for the report and README)
};

// Every parameter, in fit priority order. memory_reserve_gib is last; it is additive (may be
// negative) and fitted in linear space from peaks (calibration.h), never by the log-space fit.
std::span<const CalibrationParameter> calibration_parameters();
// nullptr when no parameter has that name.
const CalibrationParameter* find_calibration_parameter(std::string_view name);

}  // namespace tessera
