// layer_cost's TP-communication overlap term (--tp-comm-overlap): physical bounds against the
// same layer without it.
#include "cost/layer_cost.h"

#include <gtest/gtest.h>

#include <cmath>

#include "hardware/physical_ranges.h"

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"

namespace tessera {
namespace {

LayerCost cost(const ModelSpec& m, const Cluster& c, const Plan& p, std::int64_t seq, Recompute r, bool moe = false) {
  const LayerContext x = make_layer_context(m, c, p, seq, static_cast<double>(p.micro_batch * seq / p.cp), true);
  return layer_cost(x, moe, r);
}

Plan tp_plan(std::int64_t tp, bool sp, bool overlap) {
  Plan p;
  p.tp = tp;
  p.dp = 64 / tp;
  p.sequence_parallel = sp;
  p.overlap_tp_comm = overlap;
  return p;
}

// With sequence parallelism the overlap hides the all-gather / reduce-scatter behind the GEMMs
// beside them: exposed time drops, but never below one ring step (1/tp of it); nothing else moves.
TEST(LayerCost, TpCommOverlapHidesUpToOneRingStep) {
  const ModelSpec m = builtin_model("llama3-70b");
  const Cluster c = load_cluster("h100-sxm-80gb:64");
  for (Recompute r : {Recompute::none, Recompute::full}) {
    for (std::int64_t tp : {2, 4, 8}) {
      const LayerCost off = cost(m, c, tp_plan(tp, true, false), 8192, r);
      const LayerCost on = cost(m, c, tp_plan(tp, true, true), 8192, r);
      EXPECT_GT(off.tp_s, 0.0);
      EXPECT_LT(on.tp_s, off.tp_s) << tp;
      EXPECT_GE(on.tp_s, off.tp_s / static_cast<double>(tp) * (1 - 1e-12)) << tp;
      EXPECT_EQ(on.fwd_s, off.fwd_s);
      EXPECT_EQ(on.bwd_s, off.bwd_s);
      EXPECT_EQ(on.recompute_s, off.recompute_s);
    }
  }
}

// Megatron asserts --tp-comm-overlap needs sequence parallelism (arguments.py); without it, or
// without a TP group, the switch changes nothing.
TEST(LayerCost, TpCommOverlapNeedsSequenceParallelism) {
  const ModelSpec m = builtin_model("llama3-70b");
  const Cluster c = load_cluster("h100-sxm-80gb:64");
  EXPECT_EQ(cost(m, c, tp_plan(8, false, true), 8192, Recompute::none).tp_s,
            cost(m, c, tp_plan(8, false, false), 8192, Recompute::none).tp_s);
  EXPECT_EQ(cost(m, c, tp_plan(1, false, true), 8192, Recompute::none).tp_s, 0.0);
}

// Tiny GEMMs cannot hide the collective: the exposed time is the collective less their time.
TEST(LayerCost, TpCommOverlapIsBoundedByTheGemmsBesideIt) {
  const ModelSpec m = builtin_model("llama3-8b");
  const Cluster c = load_cluster("h100-sxm-80gb:64");
  const LayerCost off = cost(m, c, tp_plan(8, true, false), 512, Recompute::none);
  const LayerCost on = cost(m, c, tp_plan(8, true, true), 512, Recompute::none);
  EXPECT_LE(on.tp_s, off.tp_s);
  EXPECT_GE(on.tp_s, off.tp_s / 8.0 * (1 - 1e-12));
}

// host_op_dispatch_s: doubling it doubles the host's dispatch time of every layer; a host-bound
// layer (llama3-8b, 512 tokens over tp 8: ~0.1 ms of GPU work under ~0.8 ms of dispatch) takes
// exactly the host's time, so it doubles; a GPU-bound layer (llama3-70b, 8192 tokens, tp 1)
// does not move. The GPU's own work never does.
TEST(LayerCost, HostAndGpuCombineAsTheSmoothMaximum) {
  // fwd = (gpu^p + host^p)^(1/p) for a layer that issues without host syncs; p = 64 is the max.
  const ModelSpec small = builtin_model("llama3-8b");
  Cluster c = load_cluster("h100-sxm-80gb:64");
  for (double p : {1.0, 3.0, 8.0}) {
    c.gpu.host_overlap_exponent = p;
    const LayerCost l = cost(small, c, tp_plan(8, true, false), 512, Recompute::none);
    EXPECT_NEAR(l.fwd_s, std::pow(std::pow(l.gpu_fwd_s, p) + std::pow(l.host_fwd_s, p), 1.0 / p), 1e-12 * l.fwd_s) << p;
    EXPECT_NEAR(l.bwd_s, std::pow(std::pow(l.gpu_bwd_s, p) + std::pow(l.host_bwd_s, p), 1.0 / p), 1e-12 * l.bwd_s) << p;
  }
  c.gpu.host_overlap_exponent = physical::kMaxHostOverlapExponent;
  const LayerCost m = cost(small, c, tp_plan(8, true, false), 512, Recompute::none);
  EXPECT_EQ(m.fwd_s, std::max(m.gpu_fwd_s, m.host_fwd_s));
}

TEST(LayerCost, HostOpDispatchScalesTheHostTimeOnly) {
  Cluster c = load_cluster("h100-sxm-80gb:64");
  c.gpu.host_overlap_exponent = physical::kMaxHostOverlapExponent;  // the plain maximum: exact closed forms
  Cluster doubled = c;
  doubled.gpu.host_op_dispatch_s = 2.0 * c.gpu.host_op_dispatch_s;
  const ModelSpec small = builtin_model("llama3-8b");
  const LayerCost a = cost(small, c, tp_plan(8, true, false), 512, Recompute::none);
  const LayerCost b = cost(small, doubled, tp_plan(8, true, false), 512, Recompute::none);
  ASSERT_GT(a.host_fwd_s, 2.0 * a.gpu_fwd_s) << "the small layer must be host-bound";
  EXPECT_DOUBLE_EQ(b.host_fwd_s, 2.0 * a.host_fwd_s);
  EXPECT_DOUBLE_EQ(b.host_bwd_s, 2.0 * a.host_bwd_s);
  EXPECT_DOUBLE_EQ(b.fwd_s, 2.0 * a.fwd_s);
  EXPECT_DOUBLE_EQ(b.bwd_s, 2.0 * a.bwd_s);
  EXPECT_EQ(b.gpu_fwd_s, a.gpu_fwd_s);
  EXPECT_EQ(b.gpu_bwd_s, a.gpu_bwd_s);
  EXPECT_EQ(b.comm_s, a.comm_s);

  const ModelSpec big = builtin_model("llama3-70b");
  const LayerCost g = cost(big, c, tp_plan(1, false, false), 8192, Recompute::none);
  const LayerCost h = cost(big, doubled, tp_plan(1, false, false), 8192, Recompute::none);
  ASSERT_GT(g.gpu_fwd_s, 2.0 * g.host_fwd_s) << "the large layer must be GPU-bound";
  EXPECT_DOUBLE_EQ(h.host_fwd_s, 2.0 * g.host_fwd_s);
  EXPECT_EQ(h.fwd_s, g.fwd_s);
  EXPECT_EQ(h.bwd_s, g.bwd_s);

  // No eager dispatch at all (a graph-captured model): the layer is its GPU work.
  Cluster graphed = c;
  graphed.gpu.host_op_dispatch_s = 0;
  const LayerCost z = cost(small, graphed, tp_plan(8, true, false), 512, Recompute::none);
  EXPECT_EQ(z.host_fwd_s, 0.0);
  EXPECT_EQ(z.fwd_s, z.gpu_fwd_s);
  EXPECT_EQ(z.bwd_s, z.gpu_bwd_s);
}

// kernel_overhead_s reaches the layer's elementwise kernels and GEMMs: more of it never makes a
// layer's GPU work faster, and the host's dispatch does not depend on it.
TEST(LayerCost, KernelOverheadOnlyAddsGpuTime) {
  const Cluster c = load_cluster("h100-sxm-80gb:64");
  Cluster slower = c;
  slower.gpu.kernel_overhead_s = 2.0 * c.gpu.kernel_overhead_s;
  const ModelSpec m = builtin_model("llama3-8b");
  const LayerCost a = cost(m, c, tp_plan(8, true, false), 512, Recompute::none);
  const LayerCost b = cost(m, slower, tp_plan(8, true, false), 512, Recompute::none);
  EXPECT_GT(b.gpu_fwd_s, a.gpu_fwd_s);
  EXPECT_GT(b.gpu_bwd_s, a.gpu_bwd_s);
  EXPECT_EQ(b.host_fwd_s, a.host_fwd_s);
}

}  // namespace
}  // namespace tessera
