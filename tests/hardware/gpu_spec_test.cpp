// GpuSpec::validate accepts a complete spec and rejects each bad field by name; peak_flops
// converts TFLOP/s to FLOP/s.
#include "hardware/gpu_spec.h"

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include "core/error.h"
#include "hardware/physical_ranges.h"

namespace tessera {
namespace {

GpuSpec sample() {
  GpuSpec g;
  g.key = "test-gpu";
  g.name = "Test GPU";
  g.bf16_tflops = 312;
  g.fp8_tflops = 0;
  g.hbm_gib = 80;
  g.hbm_tbps = 2.039;
  g.nvlink_gbps = 600;
  g.gpus_per_node = 8;
  g.network_gbps_per_gpu = 200;
  g.gemm_efficiency = 0.8;
  g.fp8_gemm_efficiency = 0.7;
  g.gemm_half_dim = 128;
  g.attention_efficiency = 0.5;
  g.hbm_efficiency = 0.85;
  g.nvlink_efficiency = 0.8;
  g.network_efficiency = 0.85;
  g.usable_memory_gib = 79;
  return g;
}

using testing::thrown_field;

TEST(GpuSpec, SampleValidates) {
  EXPECT_NO_THROW(sample().validate());
  GpuSpec fp8 = sample();
  fp8.fp8_tflops = 624;
  EXPECT_NO_THROW(fp8.validate());
}

TEST(GpuSpec, PeakFlopsInFlopPerSecond) {
  GpuSpec g = sample();
  g.bf16_tflops = 989.4;
  g.fp8_tflops = 1978.9;
  EXPECT_DOUBLE_EQ(g.peak_flops(false), 989.4e12);
  EXPECT_DOUBLE_EQ(g.peak_flops(true), 1978.9e12);
}

TEST(GpuSpec, EmptyKeyRejected) {
  GpuSpec g = sample();
  g.key.clear();
  EXPECT_EQ(thrown_field([&] { g.validate(); }), "gpu.key");
}

TEST(GpuSpec, EachBadFieldNamed) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    std::string field;
    std::function<void(GpuSpec&)> mutate;
  };
  const std::vector<Case> cases = {
      {"bf16_tflops", [](GpuSpec& g) { g.bf16_tflops = 0; }},
      {"bf16_tflops", [&](GpuSpec& g) { g.bf16_tflops = nan; }},
      {"fp8_tflops", [](GpuSpec& g) { g.fp8_tflops = -1; }},
      {"hbm_gib", [](GpuSpec& g) { g.hbm_gib = -80; }},
      {"hbm_tbps", [](GpuSpec& g) { g.hbm_tbps = 0; }},
      {"nvlink_gbps", [](GpuSpec& g) { g.nvlink_gbps = 0; }},
      {"gpus_per_node", [](GpuSpec& g) { g.gpus_per_node = 0; }},
      {"network_gbps_per_gpu", [](GpuSpec& g) { g.network_gbps_per_gpu = 0; }},
      {"gemm_efficiency", [](GpuSpec& g) { g.gemm_efficiency = 1.2; }},
      {"gemm_efficiency", [](GpuSpec& g) { g.gemm_efficiency = 0; }},
      {"fp8_gemm_efficiency", [](GpuSpec& g) { g.fp8_gemm_efficiency = 0; }},
      {"gemm_half_dim", [](GpuSpec& g) { g.gemm_half_dim = 0; }},
      {"attention_efficiency", [](GpuSpec& g) { g.attention_efficiency = 1.01; }},
      {"hbm_efficiency", [](GpuSpec& g) { g.hbm_efficiency = -0.5; }},
      {"nvlink_efficiency", [](GpuSpec& g) { g.nvlink_efficiency = 2; }},
      {"network_efficiency", [&](GpuSpec& g) { g.network_efficiency = nan; }},
      {"usable_memory_gib", [](GpuSpec& g) { g.usable_memory_gib = 0; }},
      // More usable memory than the HBM is physically impossible.
      {"usable_memory_gib", [](GpuSpec& g) { g.usable_memory_gib = 81; }},
  };
  for (const auto& c : cases) {
    GpuSpec g = sample();
    c.mutate(g);
    EXPECT_EQ(thrown_field([&] { g.validate(); }), "gpu.test-gpu." + c.field) << c.field;
  }
}

// Issue 13, D8: figures get physical bounds (hardware/physical_ranges.h), not just "> 0": a
// denormal bandwidth or efficiency would reach the cost model as an infinite time.
TEST(GpuSpec, FiguresOutsideThePhysicalRangeAreRefused) {
  struct Case {
    std::string field;
    std::function<void(GpuSpec&, double)> set;
  };
  const std::vector<Case> cases = {
      {"bf16_tflops", [](GpuSpec& g, double v) { g.bf16_tflops = v; }},
      {"hbm_tbps", [](GpuSpec& g, double v) { g.hbm_tbps = v; }},
      {"nvlink_gbps", [](GpuSpec& g, double v) { g.nvlink_gbps = v; }},
      {"network_gbps_per_gpu", [](GpuSpec& g, double v) { g.network_gbps_per_gpu = v; }},
      {"gemm_efficiency", [](GpuSpec& g, double v) { g.gemm_efficiency = v; }},
      {"nvlink_efficiency", [](GpuSpec& g, double v) { g.nvlink_efficiency = v; }},
      {"gemm_half_dim", [](GpuSpec& g, double v) { g.gemm_half_dim = v; }},
  };
  for (const auto& c : cases)
    for (const double bad : {1e-308, 1e-300, 1e-12, 1e300}) {
      GpuSpec g = sample();
      c.set(g, bad);
      EXPECT_EQ(thrown_field([&] { g.validate(); }), "gpu.test-gpu." + c.field) << c.field << " = " << bad;
    }
  // The bounds themselves are accepted: nothing physical is refused.
  GpuSpec slow = sample();
  slow.nvlink_gbps = physical::kMinBandwidthGbps;
  slow.gemm_efficiency = physical::kMinEfficiency;
  slow.bf16_tflops = physical::kMinTflops;
  EXPECT_NO_THROW(slow.validate());
}

// The refittable terms (issue 14): defaults validate; each field has its own physical range
// (hardware/physical_ranges.h), both ends accepted, just outside refused with the field named.
TEST(GpuSpec, RefittableTermsHaveTheirOwnRanges) {
  using namespace physical;
  struct Case {
    std::string field;
    std::function<void(GpuSpec&, double)> set;
    double min, max;
  };
  const double hbm = sample().hbm_gib;
  const std::vector<Case> cases = {
      {"kernel_overhead_s", [](GpuSpec& g, double v) { g.kernel_overhead_s = v; }, kMinFixedTimeS, kMaxFixedTimeS},
      {"nvlink_latency_s", [](GpuSpec& g, double v) { g.nvlink_latency_s = v; }, kMinFixedTimeS, kMaxFixedTimeS},
      {"network_latency_s", [](GpuSpec& g, double v) { g.network_latency_s = v; }, kMinFixedTimeS, kMaxFixedTimeS},
      {"host_op_dispatch_s", [](GpuSpec& g, double v) { g.host_op_dispatch_s = v; }, kMinFixedTimeS, kMaxFixedTimeS},
      {"all_to_all_efficiency", [](GpuSpec& g, double v) { g.all_to_all_efficiency = v; }, kMinRelativeEfficiency,
       kMaxAllToAllEfficiency},
      {"moe_dispatch_efficiency", [](GpuSpec& g, double v) { g.moe_dispatch_efficiency = v; },
       kMinRelativeEfficiency, kMaxMoeDispatchEfficiency},
      {"memory_reserve_gib", [](GpuSpec& g, double v) { g.memory_reserve_gib = v; }, -kMaxNegativeReserveGib, hbm},
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const auto& c : cases) {
    for (const double ok : {c.min, c.max}) {
      GpuSpec g = sample();
      c.set(g, ok);
      EXPECT_NO_THROW(g.validate()) << c.field << " = " << ok;
    }
    const double below = c.min > 0 ? c.min / 2 : c.min * 1.01;
    for (const double bad : {below, c.max * 1.01, nan, inf, -inf}) {
      GpuSpec g = sample();
      c.set(g, bad);
      EXPECT_EQ(thrown_field([&] { g.validate(); }), "gpu.test-gpu." + c.field) << c.field << " = " << bad;
    }
  }
  // Latencies and kernel overhead are never 0; host dispatch may be (a graph-captured model).
  GpuSpec g = sample();
  g.host_op_dispatch_s = 0;
  EXPECT_NO_THROW(g.validate());
  g.kernel_overhead_s = 0;
  EXPECT_EQ(thrown_field([&] { g.validate(); }), "gpu.test-gpu.kernel_overhead_s");
  g = sample();
  g.network_latency_s = 0;
  EXPECT_EQ(thrown_field([&] { g.validate(); }), "gpu.test-gpu.network_latency_s");
}

TEST(GpuSpec, RefittableTermsDefaultToTheSharedConstants) {
  const GpuSpec g = sample();
  EXPECT_EQ(g.kernel_overhead_s, kDefaultKernelOverheadS);
  EXPECT_EQ(g.host_op_dispatch_s, kDefaultHostOpDispatchS);
  EXPECT_EQ(g.nvlink_latency_s, kDefaultNvlinkLatencyS);
  EXPECT_EQ(g.network_latency_s, kDefaultNetworkLatencyS);
  EXPECT_EQ(g.all_to_all_efficiency, kDefaultAllToAllEfficiency);
  EXPECT_EQ(g.moe_dispatch_efficiency, kDefaultMoeDispatchEfficiency);
  EXPECT_EQ(g.memory_reserve_gib, 0.0);
}

// Names and provenance: an alias may not be empty; family and source are free text (a custom
// GPU's family is kCustomGpuFamily by convention of the file reader, not a validation rule).
TEST(GpuSpec, AliasesMustBeNonEmpty) {
  GpuSpec g = sample();
  g.aliases = {"tg", ""};
  EXPECT_EQ(thrown_field([&] { g.validate(); }), "gpu.test-gpu.aliases");
  g.aliases = {"tg"};
  g.family = std::string(kCustomGpuFamily);
  g.source = "a test";
  EXPECT_NO_THROW(g.validate());
}

// Equality covers every field: the GPU registry tells a harmless re-registration (identical)
// from a clash (same name, other figures) with it.
TEST(GpuSpec, EqualityCoversNamesProvenanceAndFigures) {
  const GpuSpec base = sample();
  EXPECT_EQ(base, sample());
  const std::vector<std::function<void(GpuSpec&)>> changes = {
      [](GpuSpec& g) { g.family = "hopper"; },     [](GpuSpec& g) { g.source += " (other)"; },
      [](GpuSpec& g) { g.aliases = {"t"}; },       [](GpuSpec& g) { g.mxfp8 = true; },
      [](GpuSpec& g) { g.gemm_half_dim += 1; },    [](GpuSpec& g) { g.usable_memory_gib -= 1; },
      [](GpuSpec& g) { g.gpus_per_node = 4; },     [](GpuSpec& g) { g.name += " (other)"; },
      [](GpuSpec& g) { g.kernel_overhead_s *= 2; }, [](GpuSpec& g) { g.memory_reserve_gib = 1; },
      [](GpuSpec& g) { g.all_to_all_efficiency = 0.5; },
  };
  for (const auto& change : changes) {
    GpuSpec g = sample();
    change(g);
    EXPECT_FALSE(g == base);
  }
}

}  // namespace
}  // namespace tessera
