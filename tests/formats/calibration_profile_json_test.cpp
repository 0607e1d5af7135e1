#include "formats/calibration_profile_json.h"

#include <gtest/gtest.h>

#include "calibrate/calibration_profile.h"
#include "catalog/gpu_catalog.h"
#include "core/error.h"

namespace tessera {
namespace {

CalibrationProfile slower_a100() {
  CalibrationProfile p;
  GpuSpec g = find_gpu("a100-sxm-80gb");
  g.gemm_efficiency = 0.61;
  g.host_op_dispatch_s = 31e-6;
  g.memory_reserve_gib = 1.5;
  p.gpus.push_back(g);
  p.parameters.push_back({g.key, "gemm_efficiency", 0.74, 0.61, 0.2, 0.95, 0.03, ParameterStatus::fitted});
  p.measurements.push_back({"run", "iteration_time_s", g.key, 1.0, 0.9, 0.99});
  return p;
}

TEST(CalibrationProfileJson, RoundTripsTheCalibratedValues) {
  const CalibrationProfile p = slower_a100();
  const nlohmann::json j = profile_to_json(p, {.runs = 1, .files = {"runs.csv"}, .identified = {}});
  const LoadedProfile loaded = profile_from_json(j, "p.json");
  ASSERT_EQ(loaded.gpus.size(), 1u);
  EXPECT_EQ(loaded.inputs.runs, 1u);
  const GpuSpec applied = apply_profile(find_gpu("a100-sxm-80gb"), loaded);
  EXPECT_EQ(applied, p.gpus[0]);
  EXPECT_DOUBLE_EQ(j["measurements"][0]["error_before_pct"].get<double>(), -10.0);
  // A GPU the profile does not name is unchanged.
  EXPECT_EQ(apply_profile(find_gpu("h100-sxm-80gb"), loaded), find_gpu("h100-sxm-80gb"));
}

TEST(CalibrationProfileJson, RejectsUnknownParametersKindsAndValuesOutOfRange) {
  nlohmann::json j = profile_to_json(slower_a100(), {});
  j["gpus"][0]["parameters"]["gemm_speedup"] = 2.0;
  try {
    profile_from_json(j, "p.json");
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("profile.gpus[0].parameters.gemm_speedup"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("gemm_efficiency"), std::string::npos);  // the allowed names
  }
  nlohmann::json k = profile_to_json(slower_a100(), {});
  k["kind"] = "tessera-gpu-file";
  EXPECT_THROW(profile_from_json(k, "p.json"), Error);
  nlohmann::json v = profile_to_json(slower_a100(), {});
  v["gpus"][0]["parameters"]["gemm_efficiency"] = 7.0;  // above any physical fraction of the peak
  EXPECT_THROW(apply_profile(find_gpu("a100-sxm-80gb"), profile_from_json(v, "p.json")), Error);
}

TEST(ScopedProfile, FindGpuSeesTheProfileOnlyInsideTheScope) {
  const GpuSpec catalog = find_gpu("a100-sxm-80gb");
  {
    const ScopedProfile scope(profile_from_json(profile_to_json(slower_a100(), {}), "p.json"));
    EXPECT_DOUBLE_EQ(find_gpu("a100-sxm-80gb").gemm_efficiency, 0.61);
    EXPECT_DOUBLE_EQ(find_gpu("A100-SXM-80GB").host_op_dispatch_s, 31e-6);  // any name of the GPU
    EXPECT_EQ(find_gpu("h100-sxm-80gb").gemm_efficiency, find_gpu("h100-sxm-80gb").gemm_efficiency);
    ASSERT_NE(active_profile(), nullptr);
  }
  EXPECT_EQ(find_gpu("a100-sxm-80gb"), catalog);
  EXPECT_EQ(active_profile(), nullptr);
}

TEST(ScopedProfile, AProfileForAnUnknownGpuIsAnError) {
  nlohmann::json j = profile_to_json(slower_a100(), {});
  j["gpus"][0]["key"] = "a100-sxm-81gb";
  try {
    const ScopedProfile scope(profile_from_json(j, "p.json"));
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("profile.gpus[0].key"), std::string::npos) << e.what();
  }
  EXPECT_EQ(active_profile(), nullptr);
}

}  // namespace
}  // namespace tessera
