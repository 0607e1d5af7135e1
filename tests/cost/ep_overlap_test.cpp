// Expert-parallel all-to-all overlap (cost/ep_overlap.h): the three phases of Megatron-Core's
// 1F1B A2A overlap hide each all-to-all only under the compute its phase pairs it with.
#include "cost/ep_overlap.h"

#include <algorithm>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "cost/cost_model.h"
#include "cost/layer_cost.h"
#include "formats/plan_text.h"

namespace tessera {
namespace {

double all_to_alls_s(const PairedLayerWork& w) { return 2.0 * (w.dispatch_s + w.combine_s); }
double compute_s(const PairedLayerWork& w) { return w.attention_fwd_s + w.mlp_fwd_s + w.attention_bwd_s + w.mlp_bwd_s; }

TEST(EpOverlap, AllToAllsShorterThanTheirPairedComputeHideCompletely) {
  // combine (1) under attention forward (2) and backward (4); both dispatches (2) under the MLP (3 + 6).
  EXPECT_DOUBLE_EQ(ep_overlap_exposed_s({2, 3, 4, 6, 1, 1}), 0.0);
}

TEST(EpOverlap, AllToAllsLongerThanEveryPhaseLeaveTheirExcessOverTheCompute) {
  const PairedLayerWork w{1, 1, 2, 2, 5, 5};
  EXPECT_DOUBLE_EQ(ep_overlap_exposed_s(w), all_to_alls_s(w) - compute_s(w));  // 20 - 6
}

TEST(EpOverlap, SpareAttentionTimeDoesNotHideTheDispatches) {
  // An attention-heavy layer: 10.5 of compute against 4 of all-to-alls, so hiding under the whole
  // layer would leave nothing; but the two dispatches (2) outlast the MLP (0.5 + 1) they run beside.
  const PairedLayerWork w{3, 0.5, 6, 1, 1, 1};
  EXPECT_GT(compute_s(w), all_to_alls_s(w));
  EXPECT_DOUBLE_EQ(ep_overlap_exposed_s(w), 0.5);
}

TEST(EpOverlap, ExposedTimeLiesBetweenTheWholeLayerBoundAndNoOverlap) {
  const double values[] = {0.0, 0.3, 1.0, 2.5};
  for (double attention : values)
    for (double mlp : values)
      for (double a2a : values) {
        const PairedLayerWork w{attention, mlp, 2 * attention, 2 * mlp, a2a, a2a};
        const double exposed = ep_overlap_exposed_s(w);
        EXPECT_GE(exposed, std::max(0.0, all_to_alls_s(w) - compute_s(w)) - 1e-12);
        EXPECT_LE(exposed, all_to_alls_s(w) + 1e-12);
      }
}

TEST(EpOverlap, UnpairedPassesAreMegatronsWarmUp) {
  // Interleaved: (pp - s - 1) * 2 + (vpp - 1) * pp + 1 chunk forwards before the steady state.
  EXPECT_DOUBLE_EQ(unpaired_pass_fraction(8, 4, 0, 128), (14.0 + 24.0 + 1.0) / 512.0);
  EXPECT_DOUBLE_EQ(unpaired_pass_fraction(8, 4, 7, 128), (0.0 + 24.0 + 1.0) / 512.0);
  // No pipeline: the first forward and the last backward of each step.
  EXPECT_DOUBLE_EQ(unpaired_pass_fraction(1, 1, 0, 16), 1.0 / 16.0);
  // A step too short for a steady state runs every pass alone.
  EXPECT_DOUBLE_EQ(unpaired_pass_fraction(8, 4, 0, 8), 1.0);
  // Earlier stages warm up longer; more micro-batches dilute the warm-up.
  for (std::int64_t s = 1; s < 8; ++s)
    EXPECT_LT(unpaired_pass_fraction(8, 2, s, 64), unpaired_pass_fraction(8, 2, s - 1, 64));
  EXPECT_LT(unpaired_pass_fraction(8, 2, 0, 256), unpaired_pass_fraction(8, 2, 0, 64));
}

// A whole step: the exposed all-to-all per micro-batch falls toward the paired layers' as the
// step's micro-batches grow, and is more than theirs while the warm-up is part of the step.
TEST(EpOverlap, ExposedAllToAllPerMicroBatchFallsWithMoreMicroBatches) {
  const ModelSpec model = builtin_model("qwen3-235b-a22b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:256");
  const std::string plan = "tp=2,pp=8,vpp=4,dp=16,ep=32,etp=1,seq=4096,zero=1,precision=fp8,force_balance=1,overlap_ep=1,delay_wgrad=1";
  double previous = 0;
  for (const char* gbs : {"8192", "2048", "512"}) {
    const PlanRequest request = load_plan(plan + ",gbs=" + gbs, model, cluster);
    const Estimate e = estimate(model, cluster, request.plan, request.workload);
    const double per_microbatch = e.time.ep_comm_s / double(request.plan.microbatches(request.workload));
    EXPECT_GT(per_microbatch, previous) << gbs;
    EXPECT_LT(e.overlap.ep_exposed_s, e.overlap.ep_total_s) << gbs;
    previous = per_microbatch;
  }
}

// Through a whole MoE layer: with --overlap-moe-expert-parallel-comm the exposed all-to-all stays
// within the same bounds of the layer's own compute and all-to-alls, and without it nothing hides.
TEST(EpOverlap, MoeLayerOverlapStaysWithinItsBounds) {
  const struct {
    const char *model, *cluster, *plan;
  } cases[] = {
      {"qwen3-235b-a22b", "h100-sxm-80gb:256", "tp=2,pp=8,vpp=4,ep=32,etp=1,gbs=2048,seq=4096,zero=1,precision=fp8,force_balance=1"},
      {"qwen3-30b-a3b", "h100-sxm-80gb:16", "tp=1,pp=1,ep=16,gbs=1024,seq=4096,zero=1,dispatcher=flex"},
      {"deepseek-v3", "h100-sxm-80gb:1024", "tp=2,pp=16,vpp=2,ep=64,etp=1,gbs=8192,seq=4096,zero=1,recompute=selective,recompute_modules=mla_up_proj"},
  };
  for (const auto& c : cases) {
    const ModelSpec model = builtin_model(c.model);
    const Cluster cluster = load_cluster(c.cluster);
    for (const bool overlap : {false, true}) {
      const std::string text = std::string(c.plan) + (overlap ? ",overlap_ep=1,delay_wgrad=1" : "");
      const PlanRequest request = load_plan(text, model, cluster);
      const Plan& p = request.plan;
      const double tokens = double(p.micro_batch) * double(request.workload.seq_len) / double(p.cp);
      const LayerContext x = make_layer_context(model, cluster, p, request.workload.seq_len, tokens, true);
      const LayerCost layer = layer_cost(x, true, p.recompute);
      ASSERT_GT(layer.ep_total_s, 0.0) << c.model;
      if (!overlap) {
        EXPECT_DOUBLE_EQ(layer.ep_s, layer.ep_total_s) << c.model;
        continue;
      }
      EXPECT_LE(layer.ep_s, layer.ep_total_s) << c.model;
      EXPECT_GE(layer.ep_s, std::max(0.0, layer.ep_total_s - (layer.gpu_fwd_s + layer.gpu_bwd_s)) - 1e-12) << c.model;
    }
  }
}

}  // namespace
}  // namespace tessera
