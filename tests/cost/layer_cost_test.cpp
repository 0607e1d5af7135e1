// layer_cost's TP-communication overlap term (--tp-comm-overlap): physical bounds against the
// same layer without it.
#include "cost/layer_cost.h"

#include <gtest/gtest.h>

#include "io/gpu_catalog.h"
#include "io/model_source.h"

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

}  // namespace
}  // namespace tessera
