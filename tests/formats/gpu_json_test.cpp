// The GPU file format: every catalog GPU prints and reads back to the identical GpuSpec (one
// object, a list, and the whole `tessera gpus --json` document); each kind of bad field is an
// Error naming that field; a GPU without a family is custom.
#include "formats/gpu_json.h"

#include <string>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include "catalog/gpu_catalog.h"

namespace tessera {
namespace {

using testing::thrown_field;
using Json = nlohmann::json;

TEST(GpuJson, EveryCatalogGpuRoundTripsExactly) {
  for (const auto& g : gpu_catalog()) {
    const Json printed = Json::parse(gpu_to_json(g).dump(2));  // through text, as a file would be
    EXPECT_EQ(gpu_from_json(printed, "gpu", "a test"), g) << g.key;
    const auto one = gpus_from_json(printed, "a test");
    ASSERT_EQ(one.size(), 1u);
    EXPECT_EQ(one[0], g) << g.key;
  }
  const Json document = Json::parse(gpus_to_json(gpu_catalog()).dump());
  EXPECT_EQ(gpus_from_json(document, "a test"), gpu_catalog());
  EXPECT_EQ(gpus_from_json(document.at("gpus"), "a test"), gpu_catalog());  // a bare list
}

Json b200_entry() { return gpu_to_json(find_gpu("b200")); }

TEST(GpuJson, MissingFamilyAndSourceMarkTheGpuCustom) {
  Json j = b200_entry();
  j["key"] = "my-gpu";
  j.erase("family");
  j.erase("source");
  j.erase("aliases");
  j.erase("name");
  const GpuSpec g = gpu_from_json(j, "gpu", "file x.json");
  EXPECT_EQ(g.family, kCustomGpuFamily);
  EXPECT_NE(g.source.find("file x.json"), std::string::npos) << g.source;
  EXPECT_EQ(g.name, "my-gpu");
  EXPECT_TRUE(g.aliases.empty());
  j["family"] = "hopper";  // the user asserts Hopper's fitted constants hold
  EXPECT_EQ(gpu_from_json(j, "gpu", "file x.json").family, "hopper");
}

TEST(GpuJson, OptionalFieldsDefault) {
  Json j = b200_entry();
  j.erase("fp8_tflops");
  j.erase("mxfp8");
  const GpuSpec g = gpu_from_json(j, "gpu", "a test");
  EXPECT_EQ(g.fp8_tflops, 0.0);
  EXPECT_FALSE(g.mxfp8);
}

TEST(GpuJson, EveryRequiredFieldIsNamedWhenMissing) {
  for (const char* field : {"bf16_tflops", "hbm_gib", "hbm_tbps", "nvlink_gbps", "gpus_per_node",
                            "network_gbps_per_gpu", "usable_memory_gib", "gemm_efficiency",
                            "fp8_gemm_efficiency", "gemm_half_dim", "attention_efficiency", "hbm_efficiency",
                            "nvlink_efficiency", "network_efficiency"}) {
    Json j = b200_entry();
    j.erase(field);
    EXPECT_EQ(thrown_field([&] { gpu_from_json(j, "gpu", "a test"); }), std::string("gpu.b200.") + field);
  }
  Json keyless = b200_entry();
  keyless.erase("key");
  EXPECT_EQ(thrown_field([&] { gpu_from_json(keyless, "gpu", "a test"); }), "gpu.key");
}

TEST(GpuJson, BadValuesAndUnknownKeysAreNamed) {
  const auto field_with = [](const char* key, const Json& value) {
    Json j = b200_entry();
    j[key] = value;
    return thrown_field([&] { gpu_from_json(j, "gpu", "a test"); });
  };
  EXPECT_EQ(field_with("gemm_efficiency", 1.5), "gpu.b200.gemm_efficiency");
  EXPECT_EQ(field_with("hbm_gib", -80), "gpu.b200.hbm_gib");
  EXPECT_EQ(field_with("usable_memory_gib", 500), "gpu.b200.usable_memory_gib");  // above hbm_gib
  EXPECT_EQ(field_with("gpus_per_node", 4294967304LL), "gpu.b200.gpus_per_node");  // 2^32 + 8
  EXPECT_EQ(field_with("bf16_tflops", "fast"), "gpu.b200.bf16_tflops");
  EXPECT_EQ(field_with("aliases", "b2"), "gpu.b200.aliases");
  EXPECT_EQ(field_with("aliases", Json::array({""})), "gpu.b200.aliases");
  EXPECT_EQ(field_with("bf16_tflop", 100), "gpu.b200.bf16_tflop");  // a typo is not ignored
  EXPECT_EQ(field_with("key", "b200:x"), "gpu.key");                 // ':' would split GPU:COUNT
  EXPECT_EQ(field_with("key", "a+b"), "gpu.key");
  EXPECT_EQ(field_with("key", ""), "gpu.key");
  EXPECT_EQ(field_with("aliases", Json::array({"my gpu"})), "gpu.b200.aliases");
  EXPECT_EQ(thrown_field([] { gpus_from_json(Json::array(), "a test"); }), "gpu_file");
  EXPECT_EQ(thrown_field([] { gpus_from_json(42, "a test"); }), "gpu_file");
  EXPECT_EQ(thrown_field([] { gpus_from_json({{"gpus", Json::array({b200_entry()})}, {"extra", 1}}, "a test"); }),
            "gpu_file.extra");
}

// The refittable terms (issue 14) are optional: a file without them (data/gpus.json, every
// user file written before calibration) gets the cost model's shared defaults.
TEST(GpuJson, RefittableTermsAreOptionalWithTheDefaults) {
  Json j = b200_entry();
  for (const char* key : {"kernel_overhead_s", "host_op_dispatch_s", "nvlink_latency_s", "network_latency_s",
                          "all_to_all_efficiency", "moe_dispatch_efficiency", "memory_reserve_gib"}) {
    EXPECT_TRUE(j.contains(key)) << key << " is always written";
    j.erase(key);
  }
  const GpuSpec g = gpu_from_json(j, "gpu", "a test");
  EXPECT_EQ(g.kernel_overhead_s, kDefaultKernelOverheadS);
  EXPECT_EQ(g.host_op_dispatch_s, kDefaultHostOpDispatchS);
  EXPECT_EQ(g.nvlink_latency_s, kDefaultNvlinkLatencyS);
  EXPECT_EQ(g.network_latency_s, kDefaultNetworkLatencyS);
  EXPECT_EQ(g.all_to_all_efficiency, kDefaultAllToAllEfficiency);
  EXPECT_EQ(g.moe_dispatch_efficiency, kDefaultMoeDispatchEfficiency);
  EXPECT_EQ(g.memory_reserve_gib, 0.0);
  EXPECT_EQ(g, find_gpu("b200"));  // the catalog file itself omits them
}

// A calibrated GPU (every refittable term off its default) prints and reads back identically.
TEST(GpuJson, CalibratedTermsRoundTrip) {
  GpuSpec g = find_gpu("h100-sxm-80gb");
  g.key = "h100-calibrated";
  g.aliases.clear();
  g.kernel_overhead_s = 3.7e-6;
  g.host_op_dispatch_s = 0;  // graph-captured
  g.nvlink_latency_s = 3.1e-6;
  g.network_latency_s = 12.5e-6;
  g.all_to_all_efficiency = 1.35;
  g.moe_dispatch_efficiency = 0.6;
  g.memory_reserve_gib = -0.25;
  const Json printed = Json::parse(gpu_to_json(g).dump(2));
  EXPECT_EQ(printed.at("all_to_all_efficiency").get<double>(), 1.35);
  EXPECT_EQ(gpu_from_json(printed, "gpu", "a test"), g);
}

TEST(GpuJson, RefittableTermsOutOfRangeAreNamed) {
  const auto field_with = [](const char* key, const Json& value) {
    Json j = b200_entry();
    j[key] = value;
    return thrown_field([&] { gpu_from_json(j, "gpu", "a test"); });
  };
  EXPECT_EQ(field_with("kernel_overhead_s", 0), "gpu.b200.kernel_overhead_s");
  EXPECT_EQ(field_with("kernel_overhead_s", 4.5), "gpu.b200.kernel_overhead_s");  // microseconds typed as s
  EXPECT_EQ(field_with("host_op_dispatch_s", -1e-6), "gpu.b200.host_op_dispatch_s");
  EXPECT_EQ(field_with("nvlink_latency_s", 1e-308), "gpu.b200.nvlink_latency_s");
  EXPECT_EQ(field_with("network_latency_s", "slow"), "gpu.b200.network_latency_s");
  EXPECT_EQ(field_with("all_to_all_efficiency", 2.5), "gpu.b200.all_to_all_efficiency");
  EXPECT_EQ(field_with("moe_dispatch_efficiency", 0.01), "gpu.b200.moe_dispatch_efficiency");
  EXPECT_EQ(field_with("memory_reserve_gib", -1.0), "gpu.b200.memory_reserve_gib");  // below -(context + workspace)
  EXPECT_EQ(field_with("memory_reserve_gib", 1000.0), "gpu.b200.memory_reserve_gib");  // above hbm_gib
}

}  // namespace
}  // namespace tessera
