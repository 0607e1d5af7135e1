#include "export/megatron_rules.h"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

#include "core/error.h"

namespace tessera {
namespace {

using Args = std::vector<std::string>;
using Env = std::map<std::string, std::string>;

// A dense model Megatron accepts: tp 2 x pp 2, 8 layers, RoPE, SwiGLU, no biases.
Args dense_base() {
  return {"--tensor-model-parallel-size", "2", "--pipeline-model-parallel-size", "2", "--context-parallel-size", "1",
          "--micro-batch-size", "1", "--global-batch-size", "8", "--seq-length", "4096", "--num-layers", "8",
          "--hidden-size", "1024", "--ffn-hidden-size", "4096", "--num-attention-heads", "16",
          "--max-position-embeddings", "4096", "--bf16", "--disable-bias-linear", "--swiglu",
          "--position-embedding-type", "rope"};
}
// The same with 8 experts top-2 over ep 2 (all-to-all, grouped GEMMs).
Args moe_base() {
  Args a = dense_base();
  a.insert(a.end(), {"--num-experts", "8", "--moe-router-topk", "2", "--moe-grouped-gemm",
                     "--moe-token-dispatcher-type", "alltoall", "--expert-model-parallel-size", "2"});
  return a;
}
const Env kOneConnection = {{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}};

// `base` with each override's flag set to its values (replaced when present, appended otherwise)
// and the `drop` flags removed.
Args with(Args base, const std::vector<Args>& overrides, const std::vector<std::string>& drop = {}) {
  auto erase_flag = [&](const std::string& flag) {
    auto it = std::find(base.begin(), base.end(), flag);
    if (it == base.end()) return false;
    auto end = it + 1;
    while (end != base.end() && end->rfind("--", 0) != 0) ++end;
    base.erase(it, end);
    return true;
  };
  for (const auto& flag : drop) erase_flag(flag);
  for (const auto& o : overrides) {
    erase_flag(o.front());
    base.insert(base.end(), o.begin(), o.end());
  }
  return base;
}

std::set<std::string> fired_megatron_rules(const Args& args, const Env& env = kOneConnection) {
  std::set<std::string> ids;
  for (const auto& v : check_megatron_args(args, env)) ids.insert(v.id);
  return ids;
}

TEST(MegatronRules, BaseArgumentListsPass) {
  EXPECT_TRUE(fired_megatron_rules(dense_base()).empty());
  EXPECT_TRUE(fired_megatron_rules(moe_base()).empty());
}

TEST(MegatronRules, EveryRuleNamesItsSourceAndMessage) {
  std::set<std::string> ids;
  for (const auto& r : megatron_rules()) {
    EXPECT_TRUE(ids.insert(r.id).second) << "duplicate id " << r.id;
    EXPECT_NE(std::string(r.source).find("megatron/"), std::string::npos) << r.id;
    EXPECT_FALSE(std::string(r.message).empty()) << r.id;
  }
}

struct FiringCase {
  const char* id;
  Args args;
  Env env = kOneConnection;
  bool alone = true;  // false where Megatron itself refuses the list twice
};

// The dense list on one pipeline stage (CPU activation offloading refuses pipelines).
Args pp1_dense() { return with(dense_base(), {{"--pipeline-model-parallel-size", "1"}}); }

std::vector<FiringCase> firing_cases() {
  const Args d = dense_base();
  const Args m = moe_base();
  const Args pp1 = with(m, {{"--pipeline-model-parallel-size", "1"}});
  const Args fsdp2 = with(d, {{"--pipeline-model-parallel-size", "1"}, {"--use-torch-fsdp2"},
                              {"--no-gradient-accumulation-fusion"}, {"--untie-embeddings-and-output-weights"}});
  const Args overlap_ep = with(pp1, {{"--overlap-moe-expert-parallel-comm"}});
  const Args selective = with(d, {{"--recompute-granularity", "selective"}});
  const Args full = with(d, {{"--recompute-granularity", "full"}});
  const Args vpp2 = with(d, {{"--num-virtual-stages-per-pipeline-rank", "2"}});
  const Args pp4 = with(d, {{"--pipeline-model-parallel-size", "4"}});
  const Args fsdp = with(d, {{"--use-megatron-fsdp"}, {"--ckpt-format", "fsdp_dtensor"}});
  return {
      {"vpp-flags-exclusive", with(d, {{"--num-layers-per-virtual-pipeline-stage", "2"}, {"--num-virtual-stages-per-pipeline-rank", "2"}})},
      {"layout-grammar", with(d, {{"--pipeline-model-parallel-layout", "Etx|L"}})},
      {"layout-divides-pp", with(d, {{"--pipeline-model-parallel-layout", "Et*8L"}})},
      {"layout-excludes-uneven-flags", with(d, {{"--pipeline-model-parallel-layout", "Et*4|t*4L"}, {"--decoder-first-pipeline-num-layers", "4"}})},
      {"layout-embedding-first", with(d, {{"--pipeline-model-parallel-layout", "t*4|Et*4L"}})},
      {"layout-loss-last", with(d, {{"--pipeline-model-parallel-layout", "Et*4|t*4"}})},
      {"layout-decoder-count", with(d, {{"--pipeline-model-parallel-layout", "Et*4|t*3L"}})},
      {"layout-mtp-count", with(d, {{"--pipeline-model-parallel-layout", "Et*4|t*4mL"}})},
      {"layout-mtp-placement", with(d, {{"--mtp-num-layers", "1"}, {"--pipeline-model-parallel-layout", "Et*2|t*2|t*2m|t*2L"}})},
      {"vpp-per-stage-excludes-uneven", with(d, {{"--num-layers-per-virtual-pipeline-stage", "2"}, {"--decoder-first-pipeline-num-layers", "4"}})},
      {"vpp-per-stage-divides", with(d, {{"--num-layers-per-virtual-pipeline-stage", "3"}})},
      {"pp-divides-layers", with(d, {{"--num-layers", "9"}})},
      {"accounted-split-divides", with(d, {{"--account-for-embedding-in-pipeline-split"}})},
      {"accounted-excludes-uneven",
       with(d, {{"--num-layers", "6"}, {"--account-for-embedding-in-pipeline-split"}, {"--account-for-loss-in-pipeline-split"},
                {"--decoder-first-pipeline-num-layers", "2"}, {"--decoder-last-pipeline-num-layers", "4"}})},
      {"interleaved-needs-pp", with(vpp2, {{"--no-overlap-p2p-communication"}})},
      {"uneven-first-positive", with(d, {{"--decoder-first-pipeline-num-layers", "0"}})},
      {"uneven-last-positive", with(d, {{"--decoder-last-pipeline-num-layers", "0"}})},
      {"uneven-first-divides-vpp", with(vpp2, {{"--num-layers", "9"}, {"--decoder-first-pipeline-num-layers", "3"}, {"--decoder-last-pipeline-num-layers", "6"}})},
      {"uneven-last-divides-vpp", with(vpp2, {{"--num-layers", "9"}, {"--decoder-first-pipeline-num-layers", "6"}, {"--decoder-last-pipeline-num-layers", "3"}})},
      {"uneven-middle-matches", with(d, {{"--decoder-first-pipeline-num-layers", "3"}, {"--decoder-last-pipeline-num-layers", "3"}})},
      {"uneven-middle-divides", with(pp4, {{"--decoder-first-pipeline-num-layers", "1"}})},
      {"uneven-middle-divides-vpp", with(pp4, {{"--num-virtual-stages-per-pipeline-rank", "2"}, {"--num-layers", "11"}, {"--decoder-first-pipeline-num-layers", "2"}})},
      {"overlap-param-gather-needs-sharding", with(d, {{"--overlap-grad-reduce"}, {"--overlap-param-gather"}})},
      {"overlap-param-gather-needs-grad-reduce", with(d, {{"--use-distributed-optimizer"}, {"--overlap-param-gather"}})},
      {"fsdp2-no-pp", with(fsdp2, {{"--pipeline-model-parallel-size", "2"}}), {}},
      {"fsdp2-no-ep", with(fsdp2, {{"--num-experts", "8"}, {"--moe-router-topk", "2"}, {"--expert-model-parallel-size", "2"}}), {}},
      {"fsdp2-no-distributed-optimizer", with(fsdp2, {{"--use-distributed-optimizer"}}), {}},
      {"fsdp2-no-grad-accumulation-fusion", with(fsdp2, {}, {"--no-gradient-accumulation-fusion"}), {}},
      {"fsdp2-ckpt-format", with(fsdp2, {{"--ckpt-format", "torch"}}), {}},
      {"fsdp2-untied", with(fsdp2, {}, {"--untie-embeddings-and-output-weights"}), {}},
      {"fsdp2-no-fp16", with(fsdp2, {{"--fp16"}}, {"--bf16"}), {}},
      {"fsdp-cuda-connections", fsdp},
      {"megatron-fsdp-ckpt-format", with(d, {{"--use-megatron-fsdp"}}), {}},
      {"fsdp-dtensor-needs-megatron-fsdp", with(d, {{"--ckpt-format", "fsdp_dtensor"}})},
      {"megatron-fsdp-v2-no-distributed-optimizer", with(fsdp, {{"--megatron-fsdp-version", "2"}, {"--use-distributed-optimizer"}}), {}},
      {"torch-dcp-needs-fsdp2", with(d, {{"--ckpt-format", "torch_dcp"}})},
      {"save-needs-positive-interval", with(d, {{"--save", "/ckpt"}})},
      {"save-needs-positive-interval", with(d, {{"--save", "/ckpt"}, {"--save-interval", "0"}})},
      {"async-save-ckpt-format", with(d, {{"--async-save"}, {"--use-persistent-ckpt-worker"}, {"--ckpt-format", "torch"}})},
      {"async-save-needs-persistent-worker", with(d, {{"--async-save"}})},
      {"fp8-param-gather-needs-sharding", with(d, {{"--fp8-format", "hybrid"}, {"--fp8-param-gather"}})},
      {"tp-cp-cuda-connections", d, {}},
      {"tp-comm-overlap-needs-sp", with(d, {{"--tp-comm-overlap"}})},
      {"cp-divides-seq", with(d, {{"--context-parallel-size", "3"}})},
      {"heads-divide-tp", with(d, {{"--num-attention-heads", "15"}, {"--kv-channels", "64"}})},
      {"query-groups-tp", with(d, {{"--group-query-attention"}, {"--num-query-groups", "3"}})},
      {"padded-vocab-divides-tp", with(d, {{"--padded-vocab-size", "1001"}})},
      {"seq-within-max-position", with(d, {{"--max-position-embeddings", "2048"}})},
      {"kv-channels-default", with(d, {{"--hidden-size", "1000"}})},
      {"mla-not-gqa", with(d, {{"--multi-latent-attention"}, {"--group-query-attention"}, {"--num-query-groups", "2"}})},
      {"rope-type-needs-mla", with(d, {{"--rope-type", "yarn"}})},
      {"mtp-position-embedding", with(d, {{"--mtp-num-layers", "1"}, {"--position-embedding-type", "learned_absolute"}})},
      {"one-activation", with(d, {{"--squared-relu"}})},
      {"clamp-swiglu-needs-moe", with(d, {{"--activation-func-clamp-value", "7.0"}})},
      {"clamp-swiglu-no-offset", with(m, {{"--activation-func-clamp-value", "7.0"}, {"--glu-linear-offset", "1.0"}}), kOneConnection, false},
      {"clamp-positive", with(d, {{"--quick-geglu"}, {"--activation-func-clamp-value", "0"}}, {"--swiglu"})},
      {"glu-offset-needs-quick-gelu", with(d, {{"--glu-linear-offset", "1.0"}})},
      {"bf16-fp16-exclusive", with(d, {{"--fp16"}})},
      {"fp8-param-needs-fp8", with(d, {{"--use-distributed-optimizer"}, {"--fp8-param-gather"}})},
      {"ep-needs-experts", with(d, {{"--expert-model-parallel-size", "2"}})},
      {"moe-bias-needs-etp1", with(m, {}, {"--disable-bias-linear"})},
      {"moe-layer-freq-length", with(m, {{"--moe-layer-freq", "[1,1,1]"}})},
      {"expert-bias-score-function", with(m, {{"--moe-router-enable-expert-bias"}})},
      {"topk1-pre-softmax", with(m, {{"--moe-router-topk", "1"}})},
      {"group-topk-needs-groups", with(m, {{"--moe-router-group-topk", "1"}})},
      {"groups-divide-experts", with(m, {{"--moe-router-num-groups", "3"}, {"--moe-router-group-topk", "1"}})},
      {"group-topk-within-groups", with(m, {{"--moe-router-num-groups", "2"}, {"--moe-router-group-topk", "4"}})},
      {"deepep-no-pad-to-capacity", with(m, {{"--moe-token-dispatcher-type", "flex"}, {"--moe-expert-capacity-factor", "1.0"}, {"--moe-pad-expert-input-to-capacity"}})},
      {"pad-needs-capacity", with(m, {{"--moe-pad-expert-input-to-capacity"}})},
      {"capacity-load-balancing", with(m, {{"--moe-expert-capacity-factor", "1.0"}, {"--moe-router-load-balancing-type", "sinkhorn"}})},
      {"aux-loss-coeff-per-type", with(m, {{"--moe-router-load-balancing-type", "aux_loss", "seq_aux_loss"}, {"--moe-aux-loss-coeff", "0.01"}})},
      {"shared-expert-overlap-dispatcher", with(m, {{"--moe-token-dispatcher-type", "allgather"}, {"--moe-shared-expert-overlap"}})},
      {"overlap-ep-needs-ep", with(overlap_ep, {{"--expert-model-parallel-size", "1"}})},
      {"overlap-ep-dispatcher", with(overlap_ep, {{"--moe-token-dispatcher-type", "allgather"}})},
      {"overlap-ep-pp-needs-vpp", with(overlap_ep, {{"--pipeline-model-parallel-size", "2"}})},
      {"overlap-ep-no-full-recompute", with(overlap_ep, {{"--recompute-granularity", "full"}, {"--recompute-method", "uniform"}, {"--recompute-num-layers", "1"}})},
      {"overlap-ep-needs-bf16", with(overlap_ep, {}, {"--bf16"})},
      {"overlap-ep-no-shared-overlap", with(overlap_ep, {{"--moe-shared-expert-overlap"}})},
      {"overlap-ep-mtp-at-most-one", with(overlap_ep, {{"--mtp-num-layers", "2"}})},
      {"delay-wgrad-needs-overlap-ep", with(m, {{"--delay-wgrad-compute"}})},
      {"recompute-granularity-values", with(d, {{"--recompute-granularity", "partial"}})},
      {"selective-no-method", with(selective, {{"--recompute-method", "block"}})},
      {"full-needs-method", with(full, {{"--recompute-num-layers", "1"}})},
      {"full-needs-num-layers", with(full, {{"--recompute-method", "uniform"}})},
      {"selective-no-num-layers", with(selective, {{"--recompute-num-layers", "1"}})},
      {"recompute-modules-allowed", with(selective, {{"--recompute-modules", "attention"}})},
      {"moe-act-needs-grouped-gemm", with(selective, {{"--recompute-modules", "moe_act"}})},
      {"mla-up-proj-needs-mla", with(selective, {{"--recompute-modules", "mla_up_proj"}})},
      {"shared-experts-recompute-no-overlap",
       with(m, {{"--recompute-granularity", "selective"}, {"--recompute-modules", "shared_experts"},
                {"--moe-shared-expert-intermediate-size", "1024"}, {"--moe-shared-expert-overlap"}})},
      {"fp8-delayed-recompute", with(selective, {{"--fp8-format", "hybrid"}, {"--recompute-modules", "layernorm"}})},
      // Offload (megatron_offload_rules.cpp).
      {"optimizer-offload-needs-precision-aware", with(d, {{"--use-distributed-optimizer"}, {"--optimizer-cpu-offload"}})},
      {"optimizer-offload-fp8-param-gather-delayed",
       with(d, {{"--use-distributed-optimizer"}, {"--optimizer-cpu-offload"}, {"--use-precision-aware-optimizer"},
                {"--fp8-format", "hybrid"}, {"--fp8-recipe", "tensorwise"}, {"--fp8-param-gather"}})},
      {"optimizer-offload-not-fsdp-v2",
       with(fsdp, {{"--megatron-fsdp-version", "2"}, {"--optimizer-cpu-offload"}, {"--use-precision-aware-optimizer"}}),
       kOneConnection, false},  // v2 has no distributed optimizer: the precision-aware rule fires too
      {"precision-aware-needs-distributed-optimizer", with(d, {{"--use-precision-aware-optimizer"}})},
      {"precision-aware-needs-adam",
       with(d, {{"--use-distributed-optimizer"}, {"--use-precision-aware-optimizer"}, {"--optimizer", "sgd"}})},
      {"cpu-offloading-layers-below-num-layers", with(pp1_dense(), {{"--cpu-offloading-num-layers", "8"}})},
      {"cpu-offloading-no-pp", with(d, {{"--cpu-offloading-num-layers", "4"}})},
      {"cpu-offloading-no-recompute",
       with(pp1_dense(), {{"--cpu-offloading-num-layers", "4"}, {"--recompute-granularity", "selective"}})},
      {"fine-grained-offload-not-with-cpu-offloading",
       with(pp1_dense(), {{"--cpu-offloading-num-layers", "4"}, {"--fine-grained-activation-offloading"},
                          {"--offload-modules", "core_attn"}})},
      {"fine-grained-offload-needs-modules", with(pp1_dense(), {{"--fine-grained-activation-offloading"}})},
  };
}

TEST(MegatronRules, EachRuleFiresOnAListThatBreaksIt) {
  std::set<std::string> covered;
  for (const auto& c : firing_cases()) {
    const auto ids = fired_megatron_rules(c.args, c.env);
    EXPECT_TRUE(ids.count(c.id)) << c.id << " did not fire";
    if (c.alone) {
      EXPECT_EQ(ids.size(), 1u) << c.id << " fired with others";
    }
    covered.insert(c.id);
  }
  for (const auto& r : megatron_rules()) EXPECT_TRUE(covered.count(r.id)) << "no firing case for " << r.id;
}

// Checkpoint flags as plan --failures emits them pass; torch_dcp and fsdp_dtensor also save
// asynchronously (checkpointing.py), so the format rule does not fire for them.
TEST(MegatronRules, AsyncSaveWithThePersistentWorkerPasses) {
  const Args saved = with(dense_base(), {{"--save", "/ckpt"}, {"--save-interval", "250"}, {"--async-save"},
                                         {"--use-persistent-ckpt-worker"}, {"--ckpt-format", "torch_dist"}});
  EXPECT_TRUE(fired_megatron_rules(saved).empty());
  EXPECT_FALSE(fired_megatron_rules(with(saved, {{"--ckpt-format", "fsdp_dtensor"}})).count("async-save-ckpt-format"));
}

TEST(MegatronRules, SequenceParallelAtTp1IsSwitchedOffNotRefused) {
  // validate_args resets --sequence-parallel at tp = 1 instead of refusing it; only what needs
  // it (tp-comm overlap) is refused.
  const Args tp1 = with(dense_base(), {{"--tensor-model-parallel-size", "1"}, {"--sequence-parallel"}});
  EXPECT_TRUE(fired_megatron_rules(tp1, {}).empty());
  EXPECT_EQ(fired_megatron_rules(with(tp1, {{"--tp-comm-overlap"}}), {}), std::set<std::string>{"tp-comm-overlap-needs-sp"});
}

TEST(MegatronRules, MegatronFsdpVersion1ImpliesTheDistributedOptimizer) {
  // So --overlap-param-gather and --fp8-param-gather are legal with Megatron-FSDP alone.
  const Args fsdp = with(dense_base(), {{"--use-megatron-fsdp"}, {"--ckpt-format", "fsdp_dtensor"},
                                        {"--overlap-grad-reduce"}, {"--overlap-param-gather"},
                                        {"--fp8-format", "hybrid"}, {"--fp8-param-gather"}});
  EXPECT_TRUE(fired_megatron_rules(fsdp, {}).empty());
}

// What the exporter writes for an optimizer and activations on the CPU passes: the precision-aware
// optimizer on the distributed optimizer (or Megatron-FSDP version 1), and the layer offload on
// one pipeline stage without recomputation.
TEST(MegatronRules, ExportedOffloadFlagsPass) {
  const Args offload = {"--optimizer-cpu-offload", "--optimizer-offload-fraction", "1.0", "--use-precision-aware-optimizer"};
  Args distributed = with(dense_base(), {{"--use-distributed-optimizer"}});
  distributed.insert(distributed.end(), offload.begin(), offload.end());
  EXPECT_TRUE(fired_megatron_rules(distributed).empty());
  Args fsdp = with(dense_base(), {{"--use-megatron-fsdp"}, {"--ckpt-format", "fsdp_dtensor"}});
  fsdp.insert(fsdp.end(), offload.begin(), offload.end());
  EXPECT_TRUE(fired_megatron_rules(fsdp, {}).empty());
  EXPECT_TRUE(fired_megatron_rules(with(pp1_dense(), {{"--cpu-offloading-num-layers", "6"}})).empty());
  // The bound is Megatron's: fewer layers than --num-layers (8).
  EXPECT_TRUE(fired_megatron_rules(with(pp1_dense(), {{"--cpu-offloading-num-layers", "7"}})).empty());
}

TEST(MegatronLayout, ParsesMegatronsOwnExample) {
  // pipeline_parallel_layer_layout.py: "Ettt|(tt|)*29,m|L" -> [Ettt] + [tt]*29 + [m] + [L].
  const auto stages = megatron_layout_stages("Ettt|(tt|)*29,m|L");
  ASSERT_EQ(stages.size(), 32u);
  EXPECT_EQ(stages.front(), "Ettt");
  for (std::size_t k = 1; k <= 29; ++k) EXPECT_EQ(stages[k], "tt");
  EXPECT_EQ(stages[30], "m");
  EXPECT_EQ(stages[31], "L");
  EXPECT_EQ(megatron_layout_stages("Et*3|t*2mL"), (std::vector<std::string>{"Ettt", "ttmL"}));
  EXPECT_THROW(megatron_layout_stages("Etq|L"), Error);
}

}  // namespace
}  // namespace tessera
