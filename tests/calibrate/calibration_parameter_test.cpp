#include "calibrate/calibration_parameter.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "catalog/gpu_catalog.h"

namespace tessera {
namespace {

// A fitted value anywhere in a parameter's bounds must give a GPU spec that validate() accepts
// (the fit never writes a profile --profile would refuse), for every catalog GPU.
TEST(CalibrationParameter, EveryValueInsideTheBoundsIsAValidGpu) {
  for (const GpuSpec& gpu : gpu_catalog()) {
    for (const CalibrationParameter& p : calibration_parameters()) {
      for (double v : {p.lower, p.upper, 0.5 * (p.lower + p.upper)}) {
        GpuSpec g = gpu;
        g.*p.field = p.name == "memory_reserve_gib" ? std::min(v, gpu.hbm_gib) : v;
        EXPECT_NO_THROW(g.validate()) << gpu.key << " " << p.name << " = " << v;
      }
    }
  }
}

TEST(CalibrationParameter, NamesAreUniqueAndFindable) {
  std::set<std::string> names;
  for (const CalibrationParameter& p : calibration_parameters()) {
    EXPECT_TRUE(names.insert(std::string(p.name)).second) << p.name;
    EXPECT_EQ(find_calibration_parameter(p.name), &p);
    EXPECT_LT(p.lower, p.upper) << p.name;
    EXPECT_FALSE(p.cost_term.empty()) << p.name;
  }
  EXPECT_EQ(find_calibration_parameter("gemm_speedup"), nullptr);
  // memory_reserve_gib is the one additive parameter, fitted from peaks: it is last.
  EXPECT_EQ(calibration_parameters().back().name, "memory_reserve_gib");
  EXPECT_EQ(calibration_parameters().back().term, ParameterTerm::memory);
}

}  // namespace
}  // namespace tessera
