#include "calibrate/measurement.h"

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "cost/collective_cost.h"
#include "cost/compute_cost.h"

namespace tessera {
namespace {

// A collective row is the alpha-beta ring of collective_cost.h on the cluster it ran on.
TEST(Measurement, CollectivesArePredictedByTheRingFormulas) {
  const GpuSpec gpu = find_gpu("h100-sxm-80gb");
  const double bytes = 1 << 28;
  const Cluster one_node = make_cluster(gpu, 8, 8);
  const GroupLink nvlink = group_link(one_node, 1, 8);
  CollectiveMeasurement c{"r", gpu, CollectiveKind::all_reduce, bytes, 1, 8, 0, 1.0};
  EXPECT_DOUBLE_EQ(predict_collective_time_s(c, gpu), all_reduce_time_s(bytes, 8, nvlink));
  c.kind = CollectiveKind::all_gather;
  EXPECT_DOUBLE_EQ(predict_collective_time_s(c, gpu), all_gather_time_s(bytes, 8, nvlink));
  // Two nodes: the send/recv pair crosses the node boundary at one NIC's bus bandwidth.
  c.kind = CollectiveKind::send_recv;
  c.nodes = 2;
  const Cluster two = make_cluster(gpu, 16, 8);
  EXPECT_DOUBLE_EQ(predict_collective_time_s(c, gpu),
                   bytes / two.inter_node.bandwidth_bytes_per_s + two.inter_node.latency_s);
}

TEST(Measurement, GemmThroughputIsFlopsOverTheModelledTime) {
  const GpuSpec gpu = find_gpu("a100-sxm-80gb");
  const GemmMeasurement g{"g", gpu, 4096, 8192, 1024, false, 1.0};
  EXPECT_DOUBLE_EQ(predict_gemm_tflops(g, gpu), 2.0 * 4096 * 8192 * 1024 / gemm_time_s(4096, 8192, 1024, 1, gpu, false) / 1e12);
  EXPECT_LT(predict_gemm_tflops(g, gpu), gpu.bf16_tflops * gpu.gemm_efficiency);  // below the sustained peak
}

}  // namespace
}  // namespace tessera
