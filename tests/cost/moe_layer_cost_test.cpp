// The MoE block (cost/moe_layer_cost.h) and MoE plans through estimate(): expert GEMM work by
// hand, its invariance under expert tensor parallelism, and monotone properties a planner relies
// on -- more routing imbalance, a larger capacity factor or removing the EP overlap never makes a
// step faster; FP8 is never slower than BF16 for the same plan when GEMMs dominate.
#include "cost/moe_layer_cost.h"

#include <cmath>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "cost/compute_cost.h"
#include "cost/cost_model.h"
#include "cost/expert_load.h"
#include "formats/plan_text.h"

namespace tessera {
namespace {

struct MoeJob {
  ModelSpec model;
  Cluster cluster;
  PlanRequest request;
  double time_s() const { return estimate(model, cluster, request.plan, request.workload).iteration_time_s; }
};

MoeJob job(const std::string& model, const std::string& cluster, const std::string& plan) {
  MoeJob j{builtin_model(model), load_cluster(cluster), {}};
  j.request = load_plan(plan, j.model, j.cluster);
  return j;
}

LayerContext context(const MoeJob& j) {
  const Plan& p = j.request.plan;
  const double tokens = double(p.micro_batch) * double(j.request.workload.seq_len) / double(p.cp);
  return make_layer_context(j.model, j.cluster, p, j.request.workload.seq_len, tokens, true);
}

const char* kDeepSeek = "tp=2,pp=8,ep=64,etp=1,gbs=4096,seq=4096,zero=1,recompute=selective,recompute_modules=mla_up_proj";

TEST(MoeLayerCost, ExpertGemmsAreTheRoutedFlopsByHand) {
  // DeepSeek-V3 on 512 H100: each tp rank routes 4096 / 2 = 2048 tokens to 8 experts; the 4 local
  // experts see 2048 x 8 copies in all (balanced), 4096 each: fc1 4096 x 4096 x 7168, fc2
  // 4096 x 7168 x 2048 per expert, each one grouped GEMM over the 4 experts.
  const MoeJob j = job("deepseek-v3", "h100-sxm-80gb:512", std::string(kDeepSeek) + ",capacity_factor=1");
  const LayerContext x = context(j);
  const MoeBlockCost b = moe_block_cost(x);
  const GpuSpec& g = j.cluster.gpu;
  const double want =
      grouped_gemm_time_s(4096, 2 * 2048, 7168, 4, g, false) + grouped_gemm_time_s(4096, 7168, 2048, 4, g, false);
  EXPECT_NEAR(b.expert_gemm_s, want, 1e-12);
  EXPECT_TRUE(b.host_sync);
}

TEST(MoeLayerCost, ExpertTensorParallelKeepsTheWorkPerRank) {
  // etp splits each expert's width but gathers etp x the tokens: the FLOPs per rank do not change,
  // only the GEMM shapes (and the etp all-gather / reduce-scatter appears).
  const MoeJob a = job("mixtral-8x7b", "h100-sxm-80gb:64", "tp=4,ep=8,etp=1,gbs=512,seq=4096,force_balance=1");
  const MoeJob b = job("mixtral-8x7b", "h100-sxm-80gb:64", "tp=4,ep=8,etp=2,gbs=512,seq=4096,force_balance=1");
  const MoeBlockCost ca = moe_block_cost(context(a)), cb = moe_block_cost(context(b));
  EXPECT_EQ(ca.etp_comm_s, 0.0);
  EXPECT_GT(cb.etp_comm_s, 0.0);
  // Same FLOPs at nearly the same shape efficiency: within the efficiency curve's change.
  EXPECT_NEAR(cb.expert_gemm_s / ca.expert_gemm_s, 1.0, 0.1);
}

TEST(MoeLayerCost, MoreImbalanceOrCapacityNeverFaster) {
  const char* plans[] = {kDeepSeek, "tp=1,pp=1,ep=16,gbs=1024,seq=4096,zero=1,precision=fp8",
                         "tp=4,ep=128,etp=4,gbs=1024,seq=8192,zero=1"};
  const char* models[] = {"deepseek-v3", "qwen3-30b-a3b", "llama4-maverick"};
  const char* clusters[] = {"h100-sxm-80gb:512", "h100-sxm-80gb:16", "h100-sxm-80gb:512"};
  for (int i = 0; i < 3; ++i) {
    double previous = 0;
    for (const char* routing : {",force_balance=1", ",capacity_factor=1.1", "", ",capacity_factor=1.5", ",capacity_factor=2"}) {
      const MoeJob j = job(models[i], clusters[i], std::string(plans[i]) + routing);
      const double t = j.time_s();
      EXPECT_GE(t, previous) << models[i] << routing;
      previous = t;
    }
  }
  // The aux-loss default sits between forced balance and a 1.5 capacity.
  EXPECT_GT(kAuxLossMaxLoadFactor, 1.0);
  EXPECT_LT(kAuxLossMaxLoadFactor, 1.5);
}

TEST(MoeLayerCost, RemovingExpertParallelOverlapNeverFaster) {
  for (const char* plan : {"tp=2,pp=8,vpp=4,ep=32,etp=1,gbs=2048,seq=4096,zero=1,precision=fp8,force_balance=1",
                           "tp=1,pp=1,ep=16,gbs=1024,seq=4096,zero=1,precision=fp8,dispatcher=flex"}) {
    const std::string model = std::string(plan).find("ep=32") != std::string::npos ? "qwen3-235b-a22b" : "qwen3-30b-a3b";
    const std::string cluster = model == "qwen3-235b-a22b" ? "h100-sxm-80gb:256" : "h100-sxm-80gb:16";
    const MoeJob off = job(model, cluster, plan);
    const MoeJob on = job(model, cluster, std::string(plan) + ",overlap_ep=1,delay_wgrad=1");
    EXPECT_GE(off.time_s(), on.time_s()) << plan;
  }
}

TEST(MoeLayerCost, DeduplicatedDispatchNeverSlowerThanAllToAllAcrossNodes) {
  const MoeJob a2a = job("qwen3-30b-a3b", "h100-sxm-80gb:16", "ep=16,gbs=1024,seq=4096,zero=1");
  const MoeJob flex = job("qwen3-30b-a3b", "h100-sxm-80gb:16", "ep=16,gbs=1024,seq=4096,zero=1,dispatcher=flex");
  EXPECT_LT(moe_block_cost(context(flex)).dispatch_s, moe_block_cost(context(a2a)).dispatch_s);
}

TEST(MoeLayerCost, Fp8NeverSlowerWhenGemmsDominate) {
  const char* cases[][3] = {
      {"llama3-70b", "h100-sxm-80gb:64", "tp=8,pp=4,gbs=64,seq=8192,zero=1"},
      {"grok-1", "h100-sxm-80gb:512", "tp=4,pp=8,cp=2,ep=8,etp=1,vpp=8,gbs=1024,seq=8192,zero=1,capacity_factor=1"},
      {"deepseek-v3", "h100-sxm-80gb:1024", "tp=2,pp=16,ep=64,etp=1,gbs=8192,seq=4096,zero=1"},
  };
  for (const auto& c : cases)
    for (const char* recipe : {"tensorwise", "delayed", "blockwise"}) {
      const MoeJob bf16 = job(c[0], c[1], c[2]);
      const MoeJob fp8 = job(c[0], c[1], std::string(c[2]) + ",precision=fp8,fp8_recipe=" + recipe);
      EXPECT_LE(fp8.time_s(), bf16.time_s()) << c[0] << " " << recipe;
    }
}

TEST(MoeLayerCost, LayerPatternCountsOnlyMoeLayersAsMoe) {
  // Llama 4 Maverick alternates dense and MoE layers: its step lies strictly between the all-dense
  // and the all-MoE variants of the same shapes.
  MoeJob mixed = job("llama4-maverick", "h100-sxm-80gb:512", "tp=4,ep=128,etp=4,gbs=1024,seq=8192,zero=1,capacity_factor=1");
  MoeJob all_moe = mixed;
  all_moe.model.moe.layer_freq = 1;
  const double t_mixed = mixed.time_s(), t_all = all_moe.time_s();
  EXPECT_LT(t_mixed, t_all);
  EXPECT_EQ(mixed.model.moe_layers(), 24);
}

// moe_dispatch_efficiency e divides the routing / permutation memory-bound work only: permute_s
// scales by 1/e exactly; router_s's scoring part too (its GEMM and kernel overheads stay), so its
// change is linear in 1/e; expert GEMMs, activations, casts and every collective are unchanged.
TEST(MoeLayerCost, MoeDispatchEfficiencyScalesOnlyRoutingAndPermutation) {
  for (const char* plan : {"tp=4,ep=8,etp=1,gbs=512,seq=4096,force_balance=1",
                           "tp=4,ep=8,etp=2,gbs=512,seq=4096,precision=fp8"}) {
    const MoeJob base = job("mixtral-8x7b", "h100-sxm-80gb:64", plan);
    MoeJob half = base, quarter = base;
    half.cluster.gpu.moe_dispatch_efficiency = 0.5;
    quarter.cluster.gpu.moe_dispatch_efficiency = 0.25;
    const MoeBlockCost b = moe_block_cost(context(base));
    const MoeBlockCost h = moe_block_cost(context(half));
    const MoeBlockCost q = moe_block_cost(context(quarter));
    EXPECT_GT(b.permute_s, 0.0);
    EXPECT_NEAR(h.permute_s, 2.0 * b.permute_s, 1e-12 * b.permute_s);
    EXPECT_NEAR(q.permute_s, 4.0 * b.permute_s, 1e-12 * b.permute_s);
    const double scoring = h.router_s - b.router_s;  // the scoring passes at e = 1
    EXPECT_GT(scoring, 0.0);
    EXPECT_LT(scoring, b.router_s);  // the router GEMM and kernel overheads do not scale
    EXPECT_NEAR(q.router_s - h.router_s, 2.0 * scoring, 1e-9 * scoring);
    for (const MoeBlockCost* c : {&h, &q}) {
      EXPECT_EQ(c->expert_gemm_s, b.expert_gemm_s) << plan;
      EXPECT_EQ(c->expert_act_s, b.expert_act_s);
      EXPECT_EQ(c->fp8_cast_s, b.fp8_cast_s);
      EXPECT_EQ(c->shared_gemm_s, b.shared_gemm_s);
      EXPECT_EQ(c->dispatch_s, b.dispatch_s);
      EXPECT_EQ(c->etp_comm_s, b.etp_comm_s);
      EXPECT_EQ(c->host_ops, b.host_ops);
    }
  }
}

// all_to_all_efficiency reaches the MoE block's dispatch (alltoall and flex) and nothing else.
TEST(MoeLayerCost, AllToAllEfficiencySlowsOnlyTheDispatch) {
  for (const char* dispatcher : {"alltoall", "flex"}) {
    const MoeJob base = job("qwen3-30b-a3b", "h100-sxm-80gb:64",
                         std::string("tp=1,ep=16,gbs=512,seq=4096,force_balance=1,dispatcher=") + dispatcher);
    MoeJob slow = base;
    slow.cluster.gpu.all_to_all_efficiency = 0.5;
    const MoeBlockCost b = moe_block_cost(context(base));
    const MoeBlockCost s = moe_block_cost(context(slow));
    const double alpha = base.cluster.inter_node.latency_s;  // ep 16 spans two nodes
    EXPECT_NEAR(s.dispatch_s - alpha, 2.0 * (b.dispatch_s - alpha), 1e-12 * b.dispatch_s) << dispatcher;
    EXPECT_EQ(s.compute_s(), b.compute_s());
    EXPECT_EQ(s.etp_comm_s, b.etp_comm_s);
  }
}

}  // namespace
}  // namespace tessera
