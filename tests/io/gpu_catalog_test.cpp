// The built-in GPU catalog against the published figures of ../shared/validation/README.md §3,
// and the --cluster shorthand / cluster JSON.
#include "io/gpu_catalog.h"

#include <cmath>
#include <cstdint>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include "core/error.h"

namespace tessera {
namespace {

using i64 = std::int64_t;

double rel_err(double got, double want) { return std::fabs(got - want) / std::fabs(want); }

using testing::thrown_field;

TEST(GpuCatalog, EveryGpuValidatesAndKeysAreUnique) {
  std::set<std::string> keys;
  ASSERT_FALSE(gpu_catalog().empty());
  for (const auto& g : gpu_catalog()) {
    EXPECT_NO_THROW(g.validate()) << g.key;
    EXPECT_TRUE(keys.insert(g.key).second) << "duplicate " << g.key;
    EXPECT_LE(g.usable_memory_gib, g.hbm_gib) << g.key;
    if (g.fp8_tflops > 0) {
      EXPECT_GT(g.fp8_tflops, g.bf16_tflops) << g.key;
    }
    EXPECT_EQ(&find_gpu(g.key), &g);
  }
}

TEST(GpuCatalog, RequiredKeysPresent) {
  for (const char* key : {"a100-sxm-80gb", "a100-class", "h100-sxm-80gb", "h100-96gb-500w", "h800", "h200",
                          "b200", "mi210", "mi250x", "mi300x"})
    EXPECT_NO_THROW(find_gpu(key)) << key;
}

// README §3: dense peaks (TFLOP/s), HBM (GiB), HBM TB/s, NVLink GB/s.
TEST(GpuCatalog, PublishedFiguresOfValidationReadme) {
  const GpuSpec& a100 = find_gpu("a100-sxm-80gb");
  EXPECT_DOUBLE_EQ(a100.bf16_tflops, 312.0);
  EXPECT_EQ(a100.fp8_tflops, 0.0);  // n/a
  EXPECT_DOUBLE_EQ(a100.hbm_gib, 80.0);
  EXPECT_DOUBLE_EQ(a100.hbm_tbps, 2.039);
  EXPECT_DOUBLE_EQ(a100.nvlink_gbps, 600.0);

  const GpuSpec& a100_class = find_gpu("a100-class");
  EXPECT_DOUBLE_EQ(a100_class.bf16_tflops, 312.0);
  EXPECT_EQ(a100_class.fp8_tflops, 0.0);

  for (const char* key : {"h100-sxm-80gb", "h800"}) {
    const GpuSpec& h = find_gpu(key);
    EXPECT_DOUBLE_EQ(h.bf16_tflops, 989.4) << key;
    EXPECT_DOUBLE_EQ(h.fp8_tflops, 1978.9) << key;
    EXPECT_DOUBLE_EQ(h.hbm_gib, 80.0) << key;
    EXPECT_DOUBLE_EQ(h.hbm_tbps, 3.35) << key;
  }
  EXPECT_DOUBLE_EQ(find_gpu("h100-sxm-80gb").nvlink_gbps, 900.0);
  EXPECT_DOUBLE_EQ(find_gpu("h800").nvlink_gbps, 400.0);

  // H100 peak derivation: 132 SMs x 4096 FLOP/clock x 1.83 GHz = 989.4 TFLOP/s (to 0.01%).
  EXPECT_LT(rel_err(132.0 * 4096.0 * 1.83e9, find_gpu("h100-sxm-80gb").peak_flops(false)), 1e-4);
  // A100: 108 SMs x 2048 x 1.41 GHz ~ 312 TFLOP/s.
  EXPECT_LT(rel_err(108.0 * 2048.0 * 1.41e9, a100.peak_flops(false)), 1e-3);

  // The 500 W H100 part: peak not published, below the SXM figures.
  const GpuSpec& h96 = find_gpu("h100-96gb-500w");
  EXPECT_LT(h96.bf16_tflops, 989.4);
  EXPECT_LT(h96.fp8_tflops, 1978.9);
  EXPECT_DOUBLE_EQ(h96.hbm_gib, 96.0);
  EXPECT_DOUBLE_EQ(h96.hbm_tbps, 2.4);

  // H200 is an H100 die with more HBM: same compute peaks.
  EXPECT_DOUBLE_EQ(find_gpu("h200").bf16_tflops, 989.4);
  EXPECT_DOUBLE_EQ(find_gpu("h200").fp8_tflops, 1978.9);
}

TEST(GpuCatalog, UnknownGpuListsTheKeys) {
  try {
    find_gpu("v100");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "gpu");
    EXPECT_NE(e.allowed().find("h100-sxm-80gb"), std::string::npos) << e.allowed();
    EXPECT_NE(e.allowed().find("mi300x"), std::string::npos) << e.allowed();
  }
}

TEST(GpuCatalog, GpuJsonRoundTripsTheFields) {
  for (const auto& g : gpu_catalog()) {
    const auto j = gpu_to_json(g);
    EXPECT_EQ(j.at("key").get<std::string>(), g.key);
    EXPECT_DOUBLE_EQ(j.at("bf16_tflops").get<double>(), g.bf16_tflops);
    EXPECT_DOUBLE_EQ(j.at("usable_memory_gib").get<double>(), g.usable_memory_gib);
    EXPECT_EQ(j.at("gpus_per_node").get<int>(), g.gpus_per_node);
  }
}

// --- cluster shorthand and JSON --------------------------------------------------------------

TEST(ClusterShorthand, GpuColonCount) {
  const Cluster c = load_cluster("h100-sxm-80gb:64");
  EXPECT_EQ(c.gpu.key, "h100-sxm-80gb");
  EXPECT_EQ(c.gpus(), 64);
  EXPECT_EQ(c.nodes, 8);
  EXPECT_EQ(c.gpus_per_node, 8);

  const Cluster small = load_cluster("a100-sxm-80gb:2");
  EXPECT_EQ(small.nodes, 1);
  EXPECT_EQ(small.gpus_per_node, 2);

  const Cluster amd = load_cluster("mi250x:16");  // 4 per node (catalog)
  EXPECT_EQ(amd.nodes, 4);
  EXPECT_EQ(amd.gpus_per_node, 4);

  const Cluster big = load_cluster("a100-sxm-80gb:1000");
  EXPECT_EQ(big.nodes, 125);
}

TEST(ClusterShorthand, Errors) {
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb"); }), "cluster");
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb:abc"); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb:8x"); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb:"); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb:0"); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb:-8"); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb:12"); }), "cluster.gpus");  // 1.5 nodes
  EXPECT_EQ(thrown_field([] { load_cluster("h100-sxm-80gb:1001"); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { load_cluster("no-such-gpu:8"); }), "gpu");
}

TEST(ClusterJson, NodesGpusAndOverrides) {
  const Cluster by_nodes = cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"nodes", 4}});
  EXPECT_EQ(by_nodes.gpus(), 32);
  EXPECT_EQ(by_nodes.nodes, 4);

  const Cluster four = cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"gpus", 16}, {"gpus_per_node", 4}});
  EXPECT_EQ(four.nodes, 4);
  EXPECT_EQ(four.gpus_per_node, 4);

  // 200 Gbit/s -> 25 GB/s one way, times the catalog's network efficiency.
  const Cluster slow = cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"gpus", 64}, {"network_gbps_per_gpu", 200}});
  EXPECT_LT(rel_err(slow.inter_node.bandwidth_bytes_per_s, 25e9 * slow.gpu.network_efficiency), 1e-12);

  // NVLink override in GB/s both directions: 400 -> 200 GB/s one way x efficiency.
  const Cluster nv = cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"gpus", 64}, {"nvlink_gbps", 400}});
  EXPECT_LT(rel_err(nv.intra_node.bandwidth_bytes_per_s, 200e9 * nv.gpu.nvlink_efficiency), 1e-12);
}

TEST(ClusterJson, Errors) {
  EXPECT_EQ(thrown_field([] { cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"gpus", 16}, {"nodes", 2}}); }),
            "cluster.gpus");
  EXPECT_EQ(thrown_field([] { cluster_from_json({{"gpu", "h100-sxm-80gb"}}); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"gpus", 16}, {"gpu_count", 2}}); }),
            "cluster.gpu_count");
  EXPECT_EQ(thrown_field([] { cluster_from_json({{"gpu", "h100-sxm-80gb"}, {"gpus", 16}, {"network_gbps_per_gpu", 0}}); }),
            "cluster.network_gbps_per_gpu");
  EXPECT_EQ(thrown_field([] { cluster_from_json({{"gpu", "tpu"}, {"gpus", 16}}); }), "gpu");
}

}  // namespace
}  // namespace tessera
