// Ring collectives under the alpha-beta model (Thakur, Rabenseifner and Gropp 2005; Patarasuk and
// Yuan 2009: a ring all-reduce moves 2 (n-1)/n of the data per rank in 2 (n-1) steps), and the
// link a group runs on (intra-node NVLink, or k NIC rings across nodes).
#include "cost/collective_cost.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include <gtest/gtest.h>

#include "common/relative_error.h"

#include "catalog/gpu_catalog.h"

namespace tessera {
namespace {

using i64 = std::int64_t;

using testing::rel_err;

const GroupLink kLink{100e9, 5e-6};  // 100 GB/s bus bandwidth, 5 us per step

TEST(CollectiveCost, RingAllReduce) {
  for (i64 n : {2, 3, 4, 8, 16, 64, 1024}) {
    for (double bytes : {1e3, 1e6, 1.5e9}) {
      const double nd = double(n);
      const double want = 2.0 * (nd - 1.0) / nd * bytes / kLink.bandwidth_bytes_per_s +
                          2.0 * (nd - 1.0) * kLink.latency_s;
      EXPECT_LT(rel_err(all_reduce_time_s(bytes, n, kLink), want), 1e-12) << n << " " << bytes;
    }
  }
}

TEST(CollectiveCost, RingAllGatherAndReduceScatter) {
  for (i64 n : {2, 5, 8, 256}) {
    const double bytes = 4e8, nd = double(n);
    const double want = (nd - 1.0) / nd * bytes / kLink.bandwidth_bytes_per_s + (nd - 1.0) * kLink.latency_s;
    EXPECT_LT(rel_err(all_gather_time_s(bytes, n, kLink), want), 1e-12);
    EXPECT_LT(rel_err(reduce_scatter_time_s(bytes, n, kLink), want), 1e-12);
    EXPECT_LT(rel_err(all_to_all_time_s(bytes, n, kLink), want), 1e-12);
  }
}

// A ring all-reduce is a reduce-scatter followed by an all-gather (Rabenseifner's algorithm).
TEST(CollectiveCost, AllReduceIsReduceScatterPlusAllGather) {
  for (i64 n : {2, 3, 8, 12, 4096})
    for (double bytes : {1.0, 777.0, 2.5e9}) {
      const double ar = all_reduce_time_s(bytes, n, kLink);
      const double rs_ag = reduce_scatter_time_s(bytes, n, kLink) + all_gather_time_s(bytes, n, kLink);
      EXPECT_LT(rel_err(ar, rs_ag), 1e-12) << n << " " << bytes;
    }
}

TEST(CollectiveCost, SingleRankOrNoBytesCostsNothing) {
  EXPECT_EQ(all_reduce_time_s(1e9, 1, kLink), 0.0);
  EXPECT_EQ(all_gather_time_s(1e9, 1, kLink), 0.0);
  EXPECT_EQ(reduce_scatter_time_s(1e9, 1, kLink), 0.0);
  EXPECT_EQ(all_to_all_time_s(1e9, 1, kLink), 0.0);
  EXPECT_EQ(all_reduce_time_s(0.0, 8, kLink), 0.0);
  EXPECT_EQ(all_gather_time_s(0.0, 8, kLink), 0.0);
  EXPECT_EQ(p2p_time_s(0.0, kLink), 0.0);
}

TEST(CollectiveCost, PointToPointIsLatencyPlusBytesOverBandwidth) {
  EXPECT_LT(rel_err(p2p_time_s(3e8, kLink), 3e8 / 100e9 + 5e-6), 1e-12);
}

// Bandwidth term grows toward 2 B / bw with n and never exceeds it (ring bound).
TEST(CollectiveCost, AllReduceBandwidthTermBoundedByTwiceTheMessage) {
  const GroupLink no_latency{100e9, 0.0};
  double prev = 0;
  for (i64 n = 2; n <= 4096; n *= 2) {
    const double t = all_reduce_time_s(1e9, n, no_latency);
    EXPECT_GT(t, prev);
    EXPECT_LE(t, 2.0 * 1e9 / 100e9);
    prev = t;
  }
}

// An H100 node: NVLink 900 GB/s both directions -> 450 GB/s one way x 0.8 efficiency; 400 Gbit/s
// NIC per GPU -> 50 GB/s x 0.85 (catalog efficiencies).
TEST(CollectiveCost, GroupLinkInsideANodeIsNvlink) {
  const Cluster c = make_cluster(find_gpu("h100-sxm-80gb"), 64);
  const double nvlink = 450e9 * c.gpu.nvlink_efficiency;
  ASSERT_LT(rel_err(c.intra_node.bandwidth_bytes_per_s, nvlink), 1e-12);
  for (auto [stride, size] : {std::pair<i64, i64>{1, 2}, {1, 8}, {2, 4}, {4, 2}, {1, 4}}) {
    const GroupLink l = group_link(c, stride, size);
    EXPECT_DOUBLE_EQ(l.bandwidth_bytes_per_s, c.intra_node.bandwidth_bytes_per_s) << stride << "x" << size;
    EXPECT_DOUBLE_EQ(l.latency_s, c.intra_node.latency_s);
  }
}

TEST(CollectiveCost, GroupLinkAcrossNodesIsMinOfNvlinkAndKNics) {
  const Cluster c = make_cluster(find_gpu("h100-sxm-80gb"), 256);
  const double nvlink = c.intra_node.bandwidth_bytes_per_s;
  const double nic = 50e9 * c.gpu.network_efficiency;
  ASSERT_LT(rel_err(c.inter_node.bandwidth_bytes_per_s, nic), 1e-12);
  struct Case { i64 stride, size, members_per_node; };
  // dp over tp = 8 (one member per node), dp over tp = 2 (4 per node), tp = 16 (8 per node),
  // pp stride 64 (one per node).
  for (const Case k : {Case{8, 4, 1}, Case{2, 16, 4}, Case{1, 16, 8}, Case{64, 4, 1}, Case{4, 8, 2}}) {
    const GroupLink l = group_link(c, k.stride, k.size);
    const double want = std::min(nvlink, double(k.members_per_node) * nic);
    EXPECT_LT(rel_err(l.bandwidth_bytes_per_s, want), 1e-12) << k.stride << "x" << k.size;
    EXPECT_DOUBLE_EQ(l.latency_s, c.inter_node.latency_s);
    // A group that crosses nodes is never faster than NVLink.
    EXPECT_LE(l.bandwidth_bytes_per_s, nvlink);
  }
}


// Expert-parallel all-to-all by hand on DGX H100 nodes (8 GPUs, NVLink 900 GB/s both ways = 450
// one way x 0.80 NCCL efficiency = 360 GB/s; NIC 400 Gb/s = 50 GB/s x 0.85 = 42.5 GB/s).
TEST(CollectiveCost, ExpertAllToAllInsideANodeByHand) {
  const Cluster c = make_cluster(find_gpu("h100-sxm-80gb"), 64);
  const double bytes = 134.2e6;  // Qwen3-235B: 2048 tokens x top-8 x 4096 x 2 bytes
  // ep 8 at stride 1: all 8 members in the node; 7/8 of the data crosses NVLink.
  const double want = bytes * 7.0 / 8.0 / 360e9 + kDefaultNvlinkLatencyS;
  EXPECT_LT(rel_err(expert_all_to_all_time_s(bytes, 8, 1, c), want), 1e-9);
  EXPECT_NEAR(c.intra_node.bandwidth_bytes_per_s, 360e9, 1e3);
}

TEST(CollectiveCost, ExpertAllToAllAcrossNodesUsesOwnNic) {
  const Cluster c = make_cluster(find_gpu("h100-sxm-80gb"), 256);
  const double bytes = 134.2e6;
  // ep 32 at stride 1 spans 4 nodes: 7/32 over NVLink, 24/32 through this GPU's NIC at once.
  const double inter = bytes * 24.0 / 32.0 / 42.5e9, intra = bytes * 7.0 / 32.0 / 360e9;
  const double want = std::max(inter, intra) + kDefaultNetworkLatencyS;
  EXPECT_LT(rel_err(expert_all_to_all_time_s(bytes, 32, 1, c), want), 1e-9);
  // Members 4 apart (expert tensor parallel 4): 2 per node, 30/32 of the data crosses the NIC.
  const double strided = bytes * 30.0 / 32.0 / 42.5e9 + kDefaultNetworkLatencyS;
  EXPECT_LT(rel_err(expert_all_to_all_time_s(bytes, 32, 4, c), strided), 1e-9);
}

TEST(CollectiveCost, DeduplicatedDispatchSendsEachTokenOncePerNode) {
  const Cluster c = make_cluster(find_gpu("h100-sxm-80gb"), 16);
  const double token = 2048.0 * 2.0, tokens = 4096;
  // ep 16 over 2 nodes, top-8: a token reaches the other node unless all 8 experts are local,
  // 1 - (1/2)^8 of the time; the k copies then spread inside the nodes over NVLink.
  const double inter = tokens * token * (1.0 - std::pow(0.5, 8)) / 42.5e9;
  const double intra = tokens * token * 8.0 * 7.0 / 8.0 / 360e9;
  const double want = std::max(inter, intra) + kDefaultNetworkLatencyS;
  EXPECT_LT(rel_err(deduplicated_dispatch_time_s(token, tokens, 8, 16, 1, c), want), 1e-9);
  // Never more network bytes than the plain all-to-all of the same tokens.
  EXPECT_LE(deduplicated_dispatch_time_s(token, tokens, 8, 16, 1, c),
            expert_all_to_all_time_s(tokens * 8.0 * token, 16, 1, c));
}
Cluster with_gpu(const std::string& key, i64 gpus, const std::function<void(GpuSpec&)>& change) {
  GpuSpec g = find_gpu(key);
  change(g);
  return make_cluster(g, gpus);
}

// The latency fields are the alpha of every collective: a ring all-reduce of a 1-byte message
// changes by exactly 2 (n-1) x the latency's change, an all-gather by (n-1) x, a p2p by 1 x;
// inside a node only nvlink_latency_s counts, across nodes only network_latency_s.
TEST(CollectiveCost, LatencyFieldsMoveOnlyTheAlphaTerm) {
  const double delta = 7e-6;
  const Cluster base = make_cluster(find_gpu("h100-sxm-80gb"), 64);
  const Cluster nv = with_gpu("h100-sxm-80gb", 64, [&](GpuSpec& g) { g.nvlink_latency_s += delta; });
  const Cluster net = with_gpu("h100-sxm-80gb", 64, [&](GpuSpec& g) { g.network_latency_s += delta; });
  for (i64 n : {2, 4, 8}) {  // tp inside a node
    const GroupLink b = group_link(base, 1, n), l = group_link(nv, 1, n);
    const double steps = double(n - 1);
    EXPECT_NEAR(all_reduce_time_s(1.0, n, l) - all_reduce_time_s(1.0, n, b), 2.0 * steps * delta, 1e-15) << n;
    EXPECT_NEAR(all_gather_time_s(1.0, n, l) - all_gather_time_s(1.0, n, b), steps * delta, 1e-15) << n;
    EXPECT_NEAR(p2p_time_s(1.0, l) - p2p_time_s(1.0, b), delta, 1e-15);
    EXPECT_EQ(all_reduce_time_s(1.0, n, group_link(net, 1, n)), all_reduce_time_s(1.0, n, b));
    EXPECT_EQ(l.bandwidth_bytes_per_s, b.bandwidth_bytes_per_s);
  }
  for (i64 n : {2, 8}) {  // dp over tp = 8: one member per node
    const GroupLink b = group_link(base, 8, n), l = group_link(net, 8, n);
    EXPECT_NEAR(all_reduce_time_s(1.0, n, l) - all_reduce_time_s(1.0, n, b), 2.0 * double(n - 1) * delta, 1e-15);
    EXPECT_EQ(all_reduce_time_s(1.0, n, group_link(nv, 8, n)), all_reduce_time_s(1.0, n, b));
  }
  // The expert all-to-all pays the latency once, on the slowest tier it crosses.
  EXPECT_NEAR(expert_all_to_all_time_s(1e6, 8, 1, nv) - expert_all_to_all_time_s(1e6, 8, 1, base), delta, 1e-15);
  EXPECT_NEAR(expert_all_to_all_time_s(1e6, 16, 1, net) - expert_all_to_all_time_s(1e6, 16, 1, base), delta, 1e-15);
}

// all_to_all_efficiency e scales the bus bandwidth of the all-to-all terms only: with e = 0.5 the
// bandwidth part (time minus latency) doubles, on both tiers and for both dispatchers, and ring
// collectives (a TP all-reduce) are unchanged.
TEST(CollectiveCost, AllToAllEfficiencyScalesOnlyAllToAllBandwidth) {
  const double e = 0.5;
  for (i64 gpus : {8, 64}) {
    const Cluster base = make_cluster(find_gpu("h100-sxm-80gb"), gpus);
    const Cluster slow = with_gpu("h100-sxm-80gb", gpus, [&](GpuSpec& g) { g.all_to_all_efficiency = e; });
    const i64 ep = gpus == 8 ? 8 : 32;  // one node, then four
    const double alpha = ep <= 8 ? base.intra_node.latency_s : base.inter_node.latency_s;
    const double bytes = 134.2e6;
    const double a2a = expert_all_to_all_time_s(bytes, ep, 1, base) - alpha;
    EXPECT_LT(rel_err(expert_all_to_all_time_s(bytes, ep, 1, slow) - alpha, a2a / e), 1e-12) << gpus;
    const double token = 4096.0 * 2.0, tokens = 4096;
    const double dedup = deduplicated_dispatch_time_s(token, tokens, 8, ep, 1, base) - alpha;
    EXPECT_LT(rel_err(deduplicated_dispatch_time_s(token, tokens, 8, ep, 1, slow) - alpha, dedup / e), 1e-12);
    // The ring all-to-all over a GroupLink from the cluster.
    const GroupLink lb = group_link(base, 1, ep), ls = group_link(slow, 1, ep);
    EXPECT_EQ(ls.all_to_all_efficiency, e);
    const double ring_alpha = double(ep - 1) * lb.latency_s;
    EXPECT_LT(rel_err(all_to_all_time_s(bytes, ep, ls) - ring_alpha, (all_to_all_time_s(bytes, ep, lb) - ring_alpha) / e),
              1e-12);
    // Ring collectives ignore it.
    const GroupLink tb = group_link(base, 1, 8), ts = group_link(slow, 1, 8);
    EXPECT_EQ(all_reduce_time_s(bytes, 8, ts), all_reduce_time_s(bytes, 8, tb));
    EXPECT_EQ(all_gather_time_s(bytes, 8, ts), all_gather_time_s(bytes, 8, tb));
    EXPECT_EQ(reduce_scatter_time_s(bytes, 8, ts), reduce_scatter_time_s(bytes, 8, tb));
    EXPECT_EQ(p2p_time_s(bytes, ts), p2p_time_s(bytes, tb));
  }
}

// DeepSeek-V3's node-limited routing (§2.1.2, §3.2.2): 8 groups of 32 experts over EP 64 on 8
// nodes put one group on each node; a token's experts lie in 4 groups, so it reaches 4 nodes, 3.5
// besides its own (C(7,4)/C(8,4) = 1/2 that a given node is not among them), where unlimited top-8
// routing reaches 7 (1 - (7/8)^8) = 4.59 others.
TEST(CollectiveCost, GroupLimitedRoutingReachesFewerNodes) {
  EXPECT_NEAR(expected_remote_nodes(8, 8, {}), 7.0 * (1.0 - std::pow(7.0 / 8.0, 8)), 1e-12);
  EXPECT_NEAR(expected_remote_nodes(8, 8, {8, 4}), 3.5, 1e-12);
  // Groups wider than a node (8 groups over 16 nodes): the 8 experts spread over 4 x 2 nodes.
  const double span = 8.0;
  EXPECT_NEAR(expected_remote_nodes(16, 8, {8, 4}), span * (1.0 - std::pow(1.0 - 1.0 / span, 8)) * 15.0 / 16.0, 1e-12);
  // Never more than unlimited routing, and all groups allowed is unlimited.
  for (double nodes : {2.0, 4.0, 8.0, 32.0})
    EXPECT_LE(expected_remote_nodes(nodes, 8, {8, 4}), expected_remote_nodes(nodes, 8, {}) + 1e-12);
  EXPECT_EQ(expected_remote_nodes(8, 8, {8, 8}), expected_remote_nodes(8, 8, {}));
  // The dispatch moves the remote share of the bytes accordingly.
  const Cluster c = make_cluster(find_gpu("h800"), 64);
  const double limited = deduplicated_dispatch_time_s(7168.0, 4096.0, 8, 64, 1, c, {8, 4});
  EXPECT_LT(limited, deduplicated_dispatch_time_s(7168.0, 4096.0, 8, 64, 1, c));
}

}  // namespace
}  // namespace tessera
