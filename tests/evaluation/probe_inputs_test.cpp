// A probe folder read whole (README "tessera probe"): environment.json names the files and the
// world, ranks.csv agrees with it, every listed file is read into measurements of the catalog GPU
// the device name finds; a listed file that is missing, a CPU run without --gpu, a device no
// catalog GPU matches are errors naming the file or the option.
#include "evaluation/probe_inputs.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "calibrate/calibration.h"
#include "catalog/gpu_catalog.h"
#include "common/thrown_field.h"

namespace tessera {
namespace {

using testing::thrown_field;
namespace fs = std::filesystem;

class ProbeFolder : public ::testing::Test {
 protected:
  void SetUp() override {
    folder_ = fs::temp_directory_path() / ("tessera-probe-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
                                           "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(folder_);
    fs::create_directories(folder_);
  }
  void TearDown() override { fs::remove_all(folder_); }

  void write(const std::string& name, const std::string& text) const { std::ofstream(folder_ / name) << text; }
  void write_environment(const std::string& device, const std::string& name, const std::string& files) const {
    write("environment.json", R"({"probe_format": 1, "device": ")" + device + R"(", "backend": "nccl", "device_name": ")" + name +
                                  R"(", "world_size": 2, "nodes": 1, "gpus_per_node": 2, "files": )" + files + "}");
    write("ranks.csv", "rank,world_size,local_rank,node,hostname,device_name\n0,2,0,0,n0," + name + "\n1,2,1,0,n0," + name + "\n");
  }
  void write_measurements() const {
    write("gemm.csv", "m,n,k,dtype,tflops,time_ms\n4096,4096,4096,bf16,700,0.196\n8192,8192,8192,bf16,720,1.527\n");
    write("attention.csv", "batch,heads,kv_heads,seq,head_dim,causal,impl,fwd_ms,fwd_bwd_ms\n4,32,8,4096,128,1,sdpa,0.939,3.977\n");
    write("kernels.csv", "op,impl,tokens,width,pass,bytes,kernels,time_ms\ncopy,eager,16384,4096,fwd,268435456,1,0.0655\n"
                         "dispatch,eager,1,1,fwd,0,1,0.0062\n");
    write("collectives.csv", "kind,bytes,ranks,nodes,gpus_per_node,time_us,algbw_gbps,busbw_gbps\n"
                             "all_reduce,1048576,2,1,2,20,52.4288,52.4288\n");
  }
  std::string path(const std::string& name) const { return (folder_ / name).string(); }

  fs::path folder_;
};

constexpr const char* kAllFiles = R"(["gemm.csv", "attention.csv", "kernels.csv", "collectives.csv"])";

TEST_F(ProbeFolder, ReadsEveryListedFileAsTheDevicesCatalogGpu) {
  write_environment("cuda", "NVIDIA H200", kAllFiles);
  write_measurements();
  const ProbeMeasurements probe = read_probe_folder(folder_.string(), "");
  EXPECT_EQ(probe.gpu_key, "h200");
  EXPECT_EQ(probe.data.gemms.size(), 2u);
  EXPECT_EQ(probe.data.attention.size(), 2u);  // the forward and the forward + backward
  EXPECT_EQ(probe.data.kernels.size(), 2u);
  EXPECT_TRUE(probe.data.kernels[1].host_only);
  ASSERT_EQ(probe.data.collectives.size(), 1u);
  EXPECT_EQ(probe.data.collectives[0].gpus_per_node, 2);
  for (const auto& g : probe.data.gemms) EXPECT_EQ(g.gpu.key, "h200");
  // --gpu names another catalog GPU for the same folder.
  EXPECT_EQ(read_probe_folder(folder_.string(), "h100").gpu_key, "h100-sxm-80gb");
  // The folder calibrates: every measurement has a prediction before and after.
  const CalibrationProfile profile = calibrate(probe.data);
  EXPECT_EQ(profile.measurements.size(), 7u);
}

TEST_F(ProbeFolder, AListedFileThatIsMissingIsNamed) {
  write_environment("cuda", "NVIDIA H200", kAllFiles);
  write_measurements();
  fs::remove(folder_ / "kernels.csv");
  EXPECT_EQ(thrown_field([&] { read_probe_folder(folder_.string(), ""); }), "probe:" + path("kernels.csv"));
  fs::remove(folder_ / "environment.json");
  EXPECT_EQ(thrown_field([&] { read_probe_folder(folder_.string(), ""); }), "probe:" + path("environment.json"));
  EXPECT_EQ(thrown_field([&] { read_probe_folder(path("nothing-here"), ""); }), "--probe");
}

TEST_F(ProbeFolder, ACpuRunOrAnUnknownDeviceNeedsGpu) {
  write_environment("cpu", "cpu", kAllFiles);
  write_measurements();
  EXPECT_EQ(thrown_field([&] { read_probe_folder(folder_.string(), ""); }), "--gpu");
  EXPECT_EQ(read_probe_folder(folder_.string(), "a100-sxm-80gb").gpu_key, "a100-sxm-80gb");
  write_environment("cuda", "Imaginary Accelerator X", kAllFiles);
  EXPECT_EQ(thrown_field([&] { read_probe_folder(folder_.string(), ""); }), "--gpu");
}

TEST_F(ProbeFolder, BadRowsAreNamedByFileLineAndColumn) {
  write_environment("cuda", "NVIDIA H200", kAllFiles);
  write_measurements();
  write("gemm.csv", "m,n,k,dtype,tflops,time_ms\n4096,4096,4096,bf16,700,0\n");
  EXPECT_EQ(thrown_field([&] { read_probe_folder(folder_.string(), ""); }), "gemm:" + path("gemm.csv") + ":2.6");
  write_measurements();
  write("ranks.csv", "rank,world_size\n0,2\n1,4\n");
  EXPECT_EQ(thrown_field([&] { read_probe_folder(folder_.string(), ""); }), "ranks:" + path("ranks.csv") + ":3.2");
}

// The H200 fixture (tests/fixtures/probe/h200, measured on one H200 SXM): each parameter keeps what
// its own measurements say. The GEMM stage lands inside the rates its large bf16 GEMMs ran at (680-750
// TFLOP/s = 0.69-0.76 of the 989 TFLOP/s peak, ../shared/validation/h200/README.md); the streaming rate
// of the eager kernels stays below the device-to-device copy's 4.26 of 4.8 TB/s (0.89) and above the
// slowest eager kernel's; no GEMM row moves the attention rate, and no kernel row the GEMM terms.
TEST(ProbeFixture, H200ParametersKeepTheMeaningOfTheirMeasurements) {
  const ProbeMeasurements probe = read_probe_folder(std::string(TESSERA_SOURCE_DIR) + "/tests/fixtures/probe/h200", "");
  EXPECT_EQ(probe.gpu_key, "h200");
  const CalibrationProfile profile = calibrate(probe.data);
  const GpuSpec& fitted = profile.gpus.at(0);
  EXPECT_GE(fitted.gemm_efficiency, 680.0 / 989.0);
  EXPECT_LE(fitted.gemm_efficiency, 750.0 / 989.0);
  EXPECT_LT(fitted.hbm_efficiency, 4.26 / 4.8);
  EXPECT_GT(fitted.hbm_efficiency, 0.3);
  GpuSpec gemms_only_gpu = find_gpu("h200");
  CalibrationData gemms_only;
  for (const auto& g : probe.data.gemms)
    if (g.groups <= 1) gemms_only.gemms.push_back(g);
  const GpuSpec from_gemms = calibrate(gemms_only).gpus.at(0);
  EXPECT_EQ(from_gemms.gemm_efficiency, fitted.gemm_efficiency);  // the kernel and attention rows moved none of it
  EXPECT_EQ(from_gemms.hbm_efficiency, gemms_only_gpu.hbm_efficiency);
  EXPECT_EQ(from_gemms.attention_efficiency, gemms_only_gpu.attention_efficiency);
}

TEST_F(ProbeFolder, AFolderOverItsMeasurementLimitIsRefused) {
  write_environment("cuda", "NVIDIA H200", R"(["gemm.csv", "kernels.csv"])");
  write_measurements();
  std::string gemm = "m,n,k,dtype,tflops\n";
  for (std::size_t i = 0; i < kMaxProbeMeasurements; ++i) gemm += "4096,4096,4096,bf16,700\n";
  write("gemm.csv", gemm);  // 10,000 GEMMs and 2 kernel rows
  EXPECT_EQ(thrown_field([&] { read_probe_folder(folder_.string(), ""); }), "probe:" + folder_.string());
  write("kernels.csv", "op,impl,tokens,width,pass,bytes,kernels,time_ms\n");  // no rows: an error of its own
  EXPECT_EQ(thrown_field([&] { read_probe_folder(folder_.string(), ""); }), "kernels:" + path("kernels.csv") + ":1.1");
}

}  // namespace
}  // namespace tessera
