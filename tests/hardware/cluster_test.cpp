// make_cluster: node arithmetic and link bandwidths from catalog units (NVLink GB/s both
// directions summed -> one direction; NIC Gbit/s -> bytes/s), each scaled by its NCCL efficiency.
#include "hardware/cluster.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include "core/error.h"

namespace tessera {
namespace {

using i64 = std::int64_t;

double rel_err(double got, double want) { return std::fabs(got - want) / std::fabs(want); }

GpuSpec gpu(int per_node = 8) {
  GpuSpec g;
  g.key = "test-gpu";
  g.bf16_tflops = 312;
  g.hbm_gib = 80;
  g.hbm_tbps = 2.0;
  g.nvlink_gbps = 600;  // GB/s, both directions summed
  g.gpus_per_node = per_node;
  g.network_gbps_per_gpu = 200;  // Gbit/s, one direction
  g.gemm_efficiency = 0.8;
  g.fp8_gemm_efficiency = 0.7;
  g.gemm_half_dim = 128;
  g.attention_efficiency = 0.5;
  g.hbm_efficiency = 0.85;
  g.nvlink_efficiency = 0.75;
  g.network_efficiency = 0.9;
  g.usable_memory_gib = 79;
  return g;
}

using testing::thrown_field;

TEST(Cluster, WholeNodes) {
  for (i64 n : {8, 16, 64, 1000, 1024, 6144}) {
    const Cluster c = make_cluster(gpu(), n);
    EXPECT_EQ(c.gpus_per_node, 8);
    EXPECT_EQ(c.nodes, n / 8);
    EXPECT_EQ(c.gpus(), n);
  }
}

TEST(Cluster, FewerGpusThanANodeIsOnePartialNode) {
  for (i64 n : {1, 2, 7}) {
    const Cluster c = make_cluster(gpu(), n);
    EXPECT_EQ(c.nodes, 1);
    EXPECT_EQ(c.gpus_per_node, n);
    EXPECT_EQ(c.gpus(), n);
  }
}

TEST(Cluster, ExplicitNodeSize) {
  const Cluster c = make_cluster(gpu(), 16, 4);
  EXPECT_EQ(c.nodes, 4);
  EXPECT_EQ(c.gpus_per_node, 4);
  const Cluster d = make_cluster(gpu(4), 1000);  // default node size from the GPU
  EXPECT_EQ(d.nodes, 250);
  EXPECT_EQ(d.gpus_per_node, 4);
}

TEST(Cluster, PartialLastNodeBeyondOneNodeIsAnError) {
  EXPECT_EQ(thrown_field([] { make_cluster(gpu(), 1001); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { make_cluster(gpu(), 12); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { make_cluster(gpu(), 1000, 16); }), "cluster.gpus");
}

TEST(Cluster, NonPositiveGpuCountIsAnError) {
  EXPECT_EQ(thrown_field([] { make_cluster(gpu(), 0); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { make_cluster(gpu(), -8); }), "cluster.gpus");
  EXPECT_EQ(thrown_field([] { make_cluster(gpu(), 8, -1); }), "cluster.gpus_per_node");
}

TEST(Cluster, LinkBandwidthUnits) {
  const Cluster c = make_cluster(gpu(), 64);
  // 600 GB/s both ways -> 300 GB/s one way -> 3e11 B/s x 0.75.
  EXPECT_LT(rel_err(c.intra_node.bandwidth_bytes_per_s, 300e9 * 0.75), 1e-12);
  // 200 Gbit/s -> 25 GB/s -> 2.5e10 B/s x 0.9.
  EXPECT_LT(rel_err(c.inter_node.bandwidth_bytes_per_s, 25e9 * 0.9), 1e-12);
  EXPECT_GT(c.intra_node.latency_s, 0.0);
  EXPECT_GT(c.inter_node.latency_s, 0.0);
  // Crossing the network costs at least as much latency as NVLink.
  EXPECT_GE(c.inter_node.latency_s, c.intra_node.latency_s);
}

// The link latencies are the GPU's (refittable by a calibration profile), copied as given.
TEST(Cluster, LinkLatenciesComeFromTheGpu) {
  const Cluster defaults = make_cluster(gpu(), 64);
  EXPECT_EQ(defaults.intra_node.latency_s, kDefaultNvlinkLatencyS);
  EXPECT_EQ(defaults.inter_node.latency_s, kDefaultNetworkLatencyS);
  GpuSpec g = gpu();
  g.nvlink_latency_s = 2.5e-6;
  g.network_latency_s = 17e-6;
  const Cluster c = make_cluster(g, 64);
  EXPECT_EQ(c.intra_node.latency_s, 2.5e-6);
  EXPECT_EQ(c.inter_node.latency_s, 17e-6);
  // Bandwidths do not depend on the latencies.
  EXPECT_EQ(c.intra_node.bandwidth_bytes_per_s, defaults.intra_node.bandwidth_bytes_per_s);
  EXPECT_EQ(c.inter_node.bandwidth_bytes_per_s, defaults.inter_node.bandwidth_bytes_per_s);
  g.network_latency_s = 0;
  EXPECT_EQ(thrown_field([&] { make_cluster(g, 8); }), "gpu.test-gpu.network_latency_s");
}

TEST(Cluster, NetworkOverride) {
  const Cluster c = make_cluster(gpu(), 64, 0, 400);
  EXPECT_LT(rel_err(c.inter_node.bandwidth_bytes_per_s, 50e9 * 0.9), 1e-12);
  EXPECT_LT(rel_err(c.intra_node.bandwidth_bytes_per_s, 300e9 * 0.75), 1e-12);
}

TEST(Cluster, ValidateRejectsBadFields) {
  const Cluster good = make_cluster(gpu(), 16);
  EXPECT_NO_THROW(good.validate());
  Cluster c = good;
  c.nodes = 0;
  EXPECT_EQ(thrown_field([&] { c.validate(); }), "cluster.nodes");
  c = good;
  c.gpus_per_node = 0;
  EXPECT_EQ(thrown_field([&] { c.validate(); }), "cluster.gpus_per_node");
  c = good;
  c.intra_node.bandwidth_bytes_per_s = 0;
  EXPECT_EQ(thrown_field([&] { c.validate(); }), "cluster.intra_node.bandwidth");
  c = good;
  c.inter_node.bandwidth_bytes_per_s = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(thrown_field([&] { c.validate(); }), "cluster.inter_node.bandwidth");
  c = good;
  c.gpu.hbm_tbps = -1;
  EXPECT_EQ(thrown_field([&] { c.validate(); }), "gpu.test-gpu.hbm_tbps");
}

TEST(Cluster, BadGpuRejectedByMakeCluster) {
  GpuSpec g = gpu();
  g.nvlink_efficiency = 0;
  EXPECT_EQ(thrown_field([&] { make_cluster(g, 8); }), "gpu.test-gpu.nvlink_efficiency");
}

}  // namespace
}  // namespace tessera
