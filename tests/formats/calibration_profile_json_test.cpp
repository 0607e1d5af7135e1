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

TEST(CalibrationProfileJson, RoundTripsTheMeasuredGemmTable) {
  CalibrationProfile p = slower_a100();
  p.gpus[0].measured_gemms = {{4096, 4096, 4096, false, 201.5}, {8192, 1024, 28672, false, 240.0}};
  const nlohmann::json j = profile_to_json(p, {});
  const LoadedProfile loaded = profile_from_json(j, "p.json");
  EXPECT_EQ(loaded.gpus.at(0).measured_gemms, p.gpus[0].measured_gemms);
  EXPECT_EQ(apply_profile(find_gpu("a100-sxm-80gb"), loaded), p.gpus[0]);
  // A profile without the table loads as before and leaves the GPU's curve alone.
  EXPECT_FALSE(profile_to_json(slower_a100(), {})["gpus"][0].contains("measured_gemms"));
}

TEST(CalibrationProfileJson, BadMeasuredGemmRowsNameTheirField) {
  CalibrationProfile p = slower_a100();
  p.gpus[0].measured_gemms = {{4096, 4096, 4096, false, 201.5}};
  const auto error_field = [&](const char* key, const nlohmann::json& value) -> std::string {
    nlohmann::json j = profile_to_json(p, {});
    j["gpus"][0]["measured_gemms"][0][key] = value;
    try {
      apply_profile(find_gpu("a100-sxm-80gb"), profile_from_json(j, "p.json"));
    } catch (const Error& e) {
      return e.field();
    }
    return "";
  };
  EXPECT_EQ(error_field("dtype", "int8"), "profile.gpus[0].measured_gemms[0].dtype");
  EXPECT_EQ(error_field("m", 0), "profile.gpus[0].measured_gemms[0].m");
  EXPECT_EQ(error_field("k", 10.5), "profile.gpus[0].measured_gemms[0].k");
  EXPECT_EQ(error_field("tflops", -1.0), "profile.gpus[0].measured_gemms[0].tflops");
  EXPECT_EQ(error_field("tflops", 400.0), "gpu.a100-sxm-80gb.measured_gemms[0].tflops");  // above the 312 TFLOP/s peak
  EXPECT_EQ(error_field("speed", 1.0), "profile.gpus[0].measured_gemms[0].speed");
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
