// validate_plan: every shape rule rejects with a tessera::Error naming the offending knob.
// split_layers: Megatron's split of L layers over pp physical stages of vpp chunks (middle stages
// equal, the first and last take fewer, or what --decoder-first/last-pipeline-num-layers ask for;
// each stage's layers as even as it allows over its chunks).
#include "plan/plan.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/error.h"

namespace tessera {
namespace {

using i64 = std::int64_t;

using testing::thrown_field;

struct Case {
  ModelSpec model;
  Cluster cluster;
  Workload workload;
};

Case gpt3_on(i64 gpus, i64 gbs = 512, const char* gpu = "a100-sxm-80gb") {
  Case s{builtin_model("gpt3-175b"), make_cluster(find_gpu(gpu), gpus), {}};
  s.workload.global_batch = gbs;
  s.workload.seq_len = 2048;
  return s;
}

Plan plan(i64 tp, i64 pp, i64 dp) {
  Plan p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  p.sequence_parallel = tp > 1;
  return p;
}

std::string field_of(const Plan& p, const Case& s) {
  return thrown_field([&] { validate_plan(p, s.model, s.cluster, s.workload); });
}

TEST(Plan, ValidPlanPasses) {
  const Case s = gpt3_on(512);
  EXPECT_NO_THROW(validate_plan(plan(8, 8, 8), s.model, s.cluster, s.workload));
  Plan interleaved = plan(8, 8, 8);
  interleaved.vpp = 3;  // 96 layers over 24 virtual stages; 64 micro-batches, a multiple of 8
  EXPECT_NO_THROW(validate_plan(interleaved, s.model, s.cluster, s.workload));
}

TEST(Plan, GpusAndMicrobatches) {
  Plan p = plan(8, 4, 16);
  p.cp = 2;
  p.micro_batch = 2;
  EXPECT_EQ(p.gpus(), 8 * 4 * 16 * 2);
  Workload w;
  w.global_batch = 1536;
  w.seq_len = 4096;
  EXPECT_EQ(p.microbatches(w), 1536 / (16 * 2));
  EXPECT_DOUBLE_EQ(w.tokens(), 1536.0 * 4096.0);
}

TEST(Plan, RejectsTpNotDividingHeads) {
  const Case s = gpt3_on(40, 40);  // 5 nodes of 8
  EXPECT_EQ(field_of(plan(5, 1, 8), s), "tp");  // 96 heads
  const Case t = gpt3_on(56, 56);
  EXPECT_EQ(field_of(plan(7, 1, 8), t), "tp");
}

TEST(Plan, RejectsProductNotEqualToGpus) {
  const Case s = gpt3_on(512);
  EXPECT_EQ(field_of(plan(8, 8, 4), s), "dp");
  EXPECT_EQ(field_of(plan(8, 8, 16), s), "dp");
  Plan p = plan(8, 8, 8);
  p.cp = 2;
  EXPECT_EQ(field_of(p, s), "dp");
}

TEST(Plan, RejectsGlobalBatchNotDivisibleByDpTimesMicroBatch) {
  const Case s = gpt3_on(512, 100);
  EXPECT_EQ(field_of(plan(8, 8, 8), s), "gbs");  // 100 % 8 != 0
  const Case t = gpt3_on(512, 520);
  Plan p = plan(8, 8, 8);
  p.micro_batch = 2;  // 520 % 16 != 0 although 520 % 8 == 0
  EXPECT_EQ(field_of(p, t), "gbs");
}

TEST(Plan, RejectsSequenceParallelWithoutTensorParallel) {
  const Case s = gpt3_on(64, 64);
  Plan p = plan(1, 8, 8);
  p.sequence_parallel = true;
  EXPECT_EQ(field_of(p, s), "sp");
}

TEST(Plan, RejectsExpertParallelOnDenseModel) {
  const Case s = gpt3_on(512);
  Plan p = plan(8, 8, 8);
  p.ep = 2;
  EXPECT_EQ(field_of(p, s), "ep");
}

TEST(Plan, ExpertParallelRules) {
  Case s{builtin_model("mixtral-8x7b"), make_cluster(find_gpu("h100-sxm-80gb"), 64), {}};
  s.workload.global_batch = 64;
  s.workload.seq_len = 4096;
  Plan p = plan(2, 4, 8);
  p.ep = 8;
  EXPECT_NO_THROW(validate_plan(p, s.model, s.cluster, s.workload));
  p.ep = 3;  // does not divide 8 experts
  EXPECT_EQ(field_of(p, s), "ep");
  Plan q = plan(1, 16, 4);
  q.ep = 8;  // 8 experts, but dp*cp*tp = 4
  EXPECT_EQ(field_of(q, s), "ep");
}

// Megatron-Core's rules for the MoE and FP8 keys (transformer_config.py __post_init__ and
// arguments.py at Megatron-LM d98e8a64), each shown firing on an otherwise valid plan.
struct MoeRule {
  const char* name;
  void (*apply)(Plan&);
  const char* field;
};

TEST(Plan, MoeAndFp8RulesEachFire) {
  Case s{builtin_model("mixtral-8x7b"), make_cluster(find_gpu("h100-sxm-80gb"), 64), {}};
  s.workload.global_batch = 64;
  s.workload.seq_len = 4096;
  Plan base = plan(2, 4, 8);  // 16 ranks per stage
  base.ep = 8;
  base.vpp = 2;
  base.zero = OptimizerSharding::zero1;
  ASSERT_NO_THROW(validate_plan(base, s.model, s.cluster, s.workload));
  const MoeRule rules[] = {
      {"etp*ep must divide tp*cp*dp", [](Plan& p) { p.etp = 4; }, "etp"},
      {"capacity factor is finite and non-negative", [](Plan& p) { p.capacity_factor = -1; }, "capacity_factor"},
      {"EP overlap needs ep > 1", [](Plan& p) { p.ep = 1, p.overlap_ep = true; }, "overlap_ep"},
      {"EP overlap needs alltoall or flex", [](Plan& p) { p.overlap_ep = true, p.dispatcher = MoeDispatcher::allgather; }, "overlap_ep"},
      {"EP overlap excludes full recompute", [](Plan& p) { p.overlap_ep = true, p.recompute = Recompute::full; }, "overlap_ep"},
      {"EP overlap excludes recomputing moe", [](Plan& p) {
         p.overlap_ep = true, p.recompute = Recompute::selective, p.recompute_modules = kRecomputeMoe; }, "overlap_ep"},
      {"EP overlap needs vpp with pp > 1", [](Plan& p) { p.overlap_ep = true, p.vpp = 1; }, "overlap_ep"},
      {"delayed wgrad needs EP overlap", [](Plan& p) { p.delay_wgrad = true; }, "delay_wgrad"},
      {"recompute modules need selective", [](Plan& p) { p.recompute_modules = kRecomputeMoeAct; }, "recompute_modules"},
      {"mla_up_proj needs MLA", [](Plan& p) { p.recompute = Recompute::selective, p.recompute_modules = kRecomputeMlaUpProj; }, "recompute_modules"},
      {"fp8_param_gather needs fp8", [](Plan& p) { p.fp8_param_gather = true; }, "fp8_param_gather"},
      {"fp8_param_gather needs a sharded optimizer", [](Plan& p) {
         p.precision = Precision::fp8, p.fp8_param_gather = true, p.zero = OptimizerSharding::none; }, "fp8_param_gather"},
      {"delayed scaling excludes moe_act / layernorm recompute", [](Plan& p) {
         p.precision = Precision::fp8, p.fp8_recipe = Fp8Recipe::delayed, p.recompute = Recompute::selective,
         p.recompute_modules = kRecomputeMoeAct; }, "fp8_recipe"},
      {"mxfp8 needs Blackwell", [](Plan& p) { p.precision = Precision::fp8, p.fp8_recipe = Fp8Recipe::mxfp8; }, "fp8_recipe"},
  };
  for (const MoeRule& rule : rules) {
    Plan p = base;
    rule.apply(p);
    EXPECT_EQ(field_of(p, s), rule.field) << rule.name;
  }
  // The legal combinations pass: EP overlap with delayed wgrad, blockwise FP8 with moe_act.
  Plan ok = base;
  ok.overlap_ep = ok.delay_wgrad = true;
  ok.precision = Precision::fp8;
  ok.fp8_recipe = Fp8Recipe::blockwise;
  ok.fp8_param_gather = true;
  ok.recompute = Recompute::selective;
  ok.recompute_modules = kRecomputeMoeAct | kRecomputeLayernorm;
  EXPECT_NO_THROW(validate_plan(ok, s.model, s.cluster, s.workload));
  // A dense model takes no expert keys.
  const Case d = gpt3_on(512);
  Plan dense = plan(8, 8, 8);
  dense.etp = 2;
  EXPECT_EQ(field_of(dense, d), "etp");
}

TEST(Plan, RecomputeModulesText) {
  EXPECT_EQ(parse_recompute_modules("core_attn+moe_act"), unsigned{kRecomputeCoreAttn | kRecomputeMoeAct});
  EXPECT_EQ(recompute_modules_text(kRecomputeMlaUpProj | kRecomputeLayernorm), "layernorm+mla_up_proj");
  EXPECT_EQ(parse_recompute_modules(recompute_modules_text(kAllRecomputeModules)), kAllRecomputeModules);
  EXPECT_EQ(thrown_field([] { parse_recompute_modules("attn"); }), "recompute_modules");
  EXPECT_EQ(thrown_field([] { parse_recompute_modules("moe+moe"); }), "recompute_modules");
  EXPECT_EQ(thrown_field([] { parse_fp8_recipe("e4m3"); }), "fp8_recipe");
  EXPECT_EQ(thrown_field([] { parse_moe_dispatcher("deepep"); }), "dispatcher");
}

TEST(Plan, RejectsInterleavingWithoutPipeline) {
  const Case s = gpt3_on(64, 64);
  Plan p = plan(8, 1, 8);
  p.vpp = 2;
  EXPECT_EQ(field_of(p, s), "vpp");
}

TEST(Plan, RejectsMoreVirtualStagesThanLayers) {
  const Case s = gpt3_on(512);
  Plan p = plan(8, 8, 8);
  p.vpp = 13;  // 104 > 96 layers
  EXPECT_EQ(field_of(p, s), "vpp");
}

TEST(Plan, InterleavingNeedsMicrobatchesMultipleOfPp) {
  const Case s = gpt3_on(512, 8 * 12);  // 12 micro-batches, pp = 8
  Plan p = plan(8, 8, 8);
  p.vpp = 2;
  EXPECT_EQ(field_of(p, s), "mb");
}

TEST(Plan, RejectsCpNotDividingSequence) {
  Case s = gpt3_on(512);
  s.workload.seq_len = 2047;
  Plan p = plan(8, 4, 8);
  p.cp = 2;
  EXPECT_EQ(field_of(p, s), "cp");
}

TEST(Plan, RejectsFp8OnAGpuWithoutIt) {
  const Case s = gpt3_on(512);
  Plan p = plan(8, 8, 8);
  p.precision = Precision::fp8;
  EXPECT_EQ(field_of(p, s), "precision");
  const Case h = gpt3_on(512, 512, "h100-sxm-80gb");
  EXPECT_NO_THROW(validate_plan(p, h.model, h.cluster, h.workload));
}

TEST(Plan, RejectsNonPositiveDegreesAndWorkload) {
  const Case s = gpt3_on(512);
  Plan p = plan(8, 8, 8);
  p.micro_batch = 0;
  EXPECT_EQ(field_of(p, s), "mb");
  Case w = s;
  w.workload.global_batch = 0;
  EXPECT_EQ(field_of(plan(8, 8, 8), w), "gbs");
  w = s;
  w.workload.seq_len = 0;
  EXPECT_EQ(field_of(plan(8, 8, 8), w), "seq");
}

TEST(Plan, ParseEnumsRoundTrip) {
  for (auto z : {OptimizerSharding::none, OptimizerSharding::zero1, OptimizerSharding::zero2,
                 OptimizerSharding::zero3})
    EXPECT_EQ(parse_optimizer_sharding(to_string(z)), z);
  EXPECT_EQ(parse_optimizer_sharding("fsdp"), OptimizerSharding::zero3);
  EXPECT_EQ(parse_optimizer_sharding("1"), OptimizerSharding::zero1);
  EXPECT_EQ(thrown_field([] { parse_optimizer_sharding("zero4"); }), "zero");
  for (auto p : {Precision::bf16, Precision::fp8}) EXPECT_EQ(parse_precision(to_string(p)), p);
  EXPECT_EQ(parse_precision("fp16"), Precision::bf16);
  EXPECT_EQ(thrown_field([] { parse_precision("fp4"); }), "precision");
}

// --- split_layers ----------------------------------------------------------------------------

Plan pipeline(i64 pp, i64 vpp = 1, i64 first = 0, i64 last = 0) {
  Plan p;
  p.pp = pp;
  p.vpp = vpp;
  p.first_stage_layers = first;
  p.last_stage_layers = last;
  return p;
}

i64 virtual_sum(const LayerSplit& s) {
  i64 total = 0;
  for (i64 k = 0; k < s.virtual_stages; ++k) total += s.virtual_stage_layers(k);
  return total;
}

i64 ceil_div(i64 a, i64 b) { return (a + b - 1) / b; }

TEST(SplitLayers, EvenSplit) {
  for (auto [layers, pp, vpp] : {std::tuple<i64, i64, i64>{96, 8, 1}, {96, 8, 2}, {96, 12, 1}, {80, 4, 5},
                                 {126, 1, 1}, {32, 32, 1}}) {
    const LayerSplit s = split_layers(pipeline(pp, vpp), layers);
    const i64 each = layers / (pp * vpp);
    EXPECT_EQ(s.virtual_stages, pp * vpp);
    EXPECT_TRUE(s.even());
    for (i64 k = 0; k < s.virtual_stages; ++k) {
      EXPECT_EQ(s.virtual_stage_layers(k), each) << layers << " pp=" << pp << " vpp=" << vpp << " chunk " << k;
      EXPECT_EQ(s.virtual_stage_start(k), k * each);
    }
    EXPECT_EQ(virtual_sum(s), layers);
  }
}

void expect_megatron_uneven(i64 layers, i64 stages_pp) {
  const LayerSplit s = split_layers(pipeline(stages_pp), layers);
  EXPECT_EQ(virtual_sum(s), layers) << layers << " on " << stages_pp;
  EXPECT_GE(s.first, 1);
  EXPECT_GE(s.last, 1);
  EXPECT_LE(s.first, s.middle) << layers << " on " << stages_pp;
  EXPECT_LE(s.last, s.middle) << layers << " on " << stages_pp;
}

// BLOOM 176B: 70 layers on pp = 12 (BigScience 2022, arXiv 2211.05100 §3.4).
TEST(SplitLayers, Bloom70LayersOnTwelveStages) {
  const ModelSpec bloom = builtin_model("bloom-176b");
  ASSERT_EQ(bloom.layers, 70);
  expect_megatron_uneven(70, 12);
  const LayerSplit s = split_layers(pipeline(12), 70);
  // Middle stages as even as possible: ceil(70/12) = 6.
  EXPECT_EQ(s.middle, 6);
  EXPECT_EQ(s.first + s.last, 70 - 10 * 6);
}

// Llama 3.1 405B: 126 layers on pp = 16 (Llama 3 report, arXiv 2407.21783 §3.3.2: the first and
// last stages take one layer fewer... here, fewer than the middle ones).
TEST(SplitLayers, Llama405B126LayersOnSixteenStages) {
  const ModelSpec llama = builtin_model("llama3.1-405b");
  ASSERT_EQ(llama.layers, 126);
  expect_megatron_uneven(126, 16);
  const LayerSplit s = split_layers(pipeline(16), 126);
  EXPECT_EQ(s.middle, 8);  // ceil(126/16)
  EXPECT_EQ(s.first + s.last, 126 - 14 * 8);
}

// Without interleaving: no stage holds more than ceil(L / pp) layers, the first and last never
// more than a middle stage, every stage at least one (27 layers on 16 stages once put 7 on the first).
TEST(SplitLayers, UnevenSplitSweep) {
  for (i64 stages = 3; stages <= 24; ++stages)
    for (i64 layers = stages; layers <= 160; ++layers) {
      if (layers % stages == 0) continue;
      const LayerSplit s = split_layers(pipeline(stages), layers);
      EXPECT_EQ(virtual_sum(s), layers) << layers << " on " << stages;
      for (i64 k = 0; k < stages; ++k) {
        EXPECT_GE(s.virtual_stage_layers(k), 1) << layers << " on " << stages;
        EXPECT_LE(s.virtual_stage_layers(k), ceil_div(layers, stages)) << layers << " on " << stages;
      }
      EXPECT_LE(s.first, s.middle) << layers << " on " << stages;
      EXPECT_LE(s.last, s.middle) << layers << " on " << stages;
    }
}

// Megatron-Core's placement (megatron/core/transformer/transformer_block.py get_num_layers_to_build
// at d98e8a64): with --decoder-first/last-pipeline-num-layers F and Lt the middle ranks take
// (L - F - Lt) / (pp - 2) (which must divide), and every rank's layers divide by vpp into its chunks.
// Returns -1 where Megatron would assert.
i64 megatron_layers_to_build(i64 layers, i64 pp, i64 vpp, i64 first, i64 last, i64 rank) {
  const i64 middles = pp - 2;
  const i64 rest = layers - first - last;
  if (middles > 0 && rest % middles != 0) return -1;
  const i64 on_rank = rank == 0 ? first : rank == pp - 1 ? last : rest / middles;
  if (on_rank % vpp != 0) return -1;
  return on_rank / vpp;
}

// Interleaved: every (pp, vpp) whose product does not divide the layers. No chunk holds more than
// ceil(L / (pp vpp)) layers or fewer than one; chunks of one stage differ by at most one; the
// starts are the prefix sums; and wherever Megatron's flags can say the split, it is Megatron's.
TEST(SplitLayers, InterleavedSweep) {
  int megatron_expressible = 0;
  for (i64 pp = 2; pp <= 16; ++pp)
    for (i64 vpp = 2; vpp <= 8; ++vpp)
      for (i64 layers = pp * vpp; layers <= 128; ++layers) {
        if (layers % (pp * vpp) == 0) continue;
        const LayerSplit s = split_layers(pipeline(pp, vpp), layers);
        const std::string where = std::to_string(layers) + " layers, pp=" + std::to_string(pp) + " vpp=" + std::to_string(vpp);
        i64 start = 0;
        bool expressible = s.light_middles == 0;
        for (i64 k = 0; k < s.virtual_stages; ++k) {
          const i64 n = s.virtual_stage_layers(k);
          EXPECT_GE(n, 1) << where;
          EXPECT_LE(n, ceil_div(layers, pp * vpp)) << where << " chunk " << k;
          EXPECT_EQ(s.virtual_stage_start(k), start) << where << " chunk " << k;
          start += n;
          const i64 megatron = megatron_layers_to_build(layers, pp, vpp, s.first, s.last, k % pp);
          expressible = expressible && megatron >= 0;
          if (megatron >= 0 && s.light_middles == 0) {
            EXPECT_EQ(n, megatron) << where << " chunk " << k;
          }
        }
        EXPECT_EQ(start, layers) << where;
        EXPECT_LE(s.first, s.middle) << where;
        EXPECT_LE(s.last, s.middle) << where;
        EXPECT_LE(s.middle, ceil_div(layers, pp)) << where;
        for (i64 stage = 0; stage < pp; ++stage) {
          i64 widest = 0, narrowest = layers;
          for (i64 k = stage; k < s.virtual_stages; k += pp) {
            widest = std::max(widest, s.virtual_stage_layers(k));
            narrowest = std::min(narrowest, s.virtual_stage_layers(k));
          }
          EXPECT_LE(widest - narrowest, 1) << where << " stage " << stage;
        }
        megatron_expressible += expressible ? 1 : 0;
      }
  EXPECT_GT(megatron_expressible, 100);  // the comparison with Megatron's rule is not vacuous
}

// The case that was mispriced: 80 layers (Llama 3 70B) on pp 8 x vpp 4 put 10 layers on the
// first and last chunks and 2 on the others; each rank now holds 10, in chunks of 2 or 3.
TEST(SplitLayers, Llama70BOnEightStagesOfFourChunks) {
  const LayerSplit s = split_layers(pipeline(8, 4), 80);
  for (i64 stage = 0; stage < 8; ++stage) EXPECT_EQ(s.physical_stage_layers(stage), 10) << stage;
  for (i64 k = 0; k < 32; ++k) {
    EXPECT_GE(s.virtual_stage_layers(k), 2) << k;
    EXPECT_LE(s.virtual_stage_layers(k), 3) << k;
  }
  // The embedding's chunk and the loss's chunk are the lighter ones of their ranks.
  EXPECT_EQ(s.virtual_stage_layers(0), 2);
  EXPECT_EQ(s.virtual_stage_layers(31), 2);
}

// Every model of the zoo, every (pp, vpp) whose product does not divide its layers.
TEST(SplitLayers, ZooModelsNeverOverfillAChunk) {
  for (const std::string& name : builtin_model_names()) {
    const i64 layers = builtin_model(name).layers;
    for (i64 pp = 2; pp <= std::min<i64>(16, layers); ++pp)
      for (i64 vpp = 1; vpp <= 8 && pp * vpp <= layers; ++vpp) {
        if (layers % (pp * vpp) == 0) continue;
        const LayerSplit s = split_layers(pipeline(pp, vpp), layers);
        EXPECT_EQ(virtual_sum(s), layers) << name;
        for (i64 k = 0; k < s.virtual_stages; ++k)
          EXPECT_LE(s.virtual_stage_layers(k), ceil_div(layers, pp * vpp)) << name << " pp=" << pp << " vpp=" << vpp;
      }
  }
}

TEST(SplitLayers, ExplicitFirstAndLast) {
  const LayerSplit both = split_layers(pipeline(4, 1, 4, 4), 70);
  EXPECT_EQ(both.first, 4);
  EXPECT_EQ(both.last, 4);
  EXPECT_EQ(both.middle, 31);
  EXPECT_EQ(virtual_sum(both), 70);

  // Only one end given: the other takes the middle stages' share.
  const LayerSplit first_only = split_layers(pipeline(4, 1, 6, 0), 30);
  EXPECT_EQ(first_only.first, 6);
  EXPECT_EQ(first_only.middle, 8);
  EXPECT_EQ(first_only.last, 8);
  const LayerSplit last_only = split_layers(pipeline(4, 1, 0, 3), 30);
  EXPECT_EQ(last_only.last, 3);
  EXPECT_EQ(last_only.first, 9);
  EXPECT_EQ(last_only.middle, 9);

  // pp = 2: first + last must be all layers.
  const LayerSplit two = split_layers(pipeline(2, 1, 10, 22), 32);
  EXPECT_EQ(two.first, 10);
  EXPECT_EQ(two.last, 22);

  // Interleaved: the counts are whole ranks (Megatron's flags), split over each rank's chunks.
  const LayerSplit chunks = split_layers(pipeline(4, 2, 6, 0), 30);
  EXPECT_EQ(chunks.physical_stage_layers(0), 6);
  EXPECT_EQ(chunks.physical_stage_layers(3), 8);
  EXPECT_EQ(chunks.virtual_stage_layers(0), 3);
  EXPECT_EQ(chunks.virtual_stage_layers(4), 3);
  EXPECT_EQ(chunks.virtual_stage_layers(7), 4);
  EXPECT_EQ(virtual_sum(chunks), 30);
}

TEST(SplitLayers, ImpossibleExplicitSplitIsAnError) {
  EXPECT_EQ(thrown_field([] { split_layers(pipeline(4, 1, 5, 0), 30); }), "first_stage_layers");
  EXPECT_EQ(thrown_field([] { split_layers(pipeline(4, 1, 0, 5), 30); }), "last_stage_layers");
  EXPECT_EQ(thrown_field([] { split_layers(pipeline(4, 1, 20, 20), 30); }), "first_stage_layers");
  EXPECT_EQ(thrown_field([] { split_layers(pipeline(2, 1, 10, 10), 32); }), "first_stage_layers");
  // A rank of fewer layers than chunks would leave a chunk empty.
  EXPECT_EQ(thrown_field([] { split_layers(pipeline(4, 3, 2, 0), 32); }), "first_stage_layers");
  // validate_plan surfaces it too.
  const Case s = gpt3_on(512);
  Plan p = plan(8, 8, 8);
  p.first_stage_layers = 6;  // 90 left for 7 stages
  EXPECT_EQ(field_of(p, s), "first_stage_layers");
}

// Conservation: every layer lives on exactly one physical stage, and the physical stages agree
// with the virtual-stage list (virtual stage k runs on physical stage k % pp).
TEST(SplitLayers, PhysicalStagesSumToLayerCount) {
  for (auto [layers, pp, vpp] :
       {std::tuple<i64, i64, i64>{96, 8, 1}, {96, 8, 2}, {96, 4, 3}, {96, 8, 4}, {70, 12, 1}, {126, 16, 1},
        {70, 4, 2}, {80, 4, 5}, {61, 8, 1}, {61, 4, 2}, {50, 3, 5}, {32, 2, 1}, {33, 2, 1}, {45, 2, 2}, {36, 2, 3}, {7, 7, 1}}) {
    const Plan p = pipeline(pp, vpp);
    const LayerSplit s = split_layers(p, layers);
    const auto virtual_layers = layers_per_virtual_stage(p, layers);
    ASSERT_EQ(static_cast<i64>(virtual_layers.size()), pp * vpp);
    EXPECT_EQ(std::accumulate(virtual_layers.begin(), virtual_layers.end(), i64{0}), layers);
    i64 total = 0;
    for (i64 stage = 0; stage < pp; ++stage) {
      i64 from_virtual = 0;
      for (i64 k = stage; k < pp * vpp; k += pp) from_virtual += virtual_layers[static_cast<std::size_t>(k)];
      const i64 physical = s.physical_stage_layers(stage);
      EXPECT_EQ(physical, from_virtual) << layers << " pp=" << pp << " vpp=" << vpp << " stage " << stage;
      EXPECT_GE(physical, 1);
      total += physical;
    }
    EXPECT_EQ(total, layers) << layers << " pp=" << pp << " vpp=" << vpp;
  }
}

// Megatron's --account-for-embedding/loss-in-pipeline-split (transformer_block.py
// get_num_layers_to_build, transformer_layer.py get_transformer_layer_offset @ d98e8a64), written
// out here: N = L + embedding + loss slots; every virtual stage builds N / (pp vpp) layers, the
// first (rank 0, chunk 0) one fewer for the embedding, the last (rank pp - 1, chunk vpp - 1) one
// fewer for the loss; a chunk may be left with none.
i64 megatron_accounted_chunk(i64 layers, i64 pp, i64 vpp, bool embedding, bool loss, i64 k) {
  const i64 per_chunk = (layers + (embedding ? 1 : 0) + (loss ? 1 : 0)) / (pp * vpp);
  const i64 rank = k % pp, chunk = k / pp;
  i64 n = per_chunk;
  if (embedding && rank == 0 && chunk == 0) --n;
  if (loss && rank == pp - 1 && chunk == vpp - 1) --n;
  return n;
}

Plan accounted(i64 pp, i64 vpp, bool embedding, bool loss) {
  Plan p = pipeline(pp, vpp);
  p.account_embedding = embedding;
  p.account_loss = loss;
  return p;
}

TEST(SplitLayers, AccountedEmbeddingAndLossFollowMegatronsRule) {
  int cases = 0;
  for (i64 layers : {30, 46, 61, 62, 94, 126})
    for (i64 pp : {2, 4, 8, 16, 32})
      for (i64 vpp : {1, 2, 3, 4})
        for (auto [embedding, loss] : {std::pair{true, true}, {true, false}, {false, true}}) {
          const i64 slots = layers + (embedding ? 1 : 0) + (loss ? 1 : 0);
          if (slots % (pp * vpp) != 0 || (vpp > 1 && pp == 1)) continue;
          const LayerSplit s = split_layers(accounted(pp, vpp, embedding, loss), layers);
          i64 start = 0;
          for (i64 k = 0; k < pp * vpp; ++k) {
            const i64 want = megatron_accounted_chunk(layers, pp, vpp, embedding, loss, k);
            EXPECT_EQ(s.virtual_stage_layers(k), want) << layers << " pp " << pp << " vpp " << vpp << " chunk " << k;
            EXPECT_EQ(s.virtual_stage_start(k), start) << layers << " pp " << pp << " vpp " << vpp << " chunk " << k;
            start += want;
          }
          EXPECT_EQ(start, layers);
          ++cases;
        }
  EXPECT_GT(cases, 20);
  // The ModelZoo's Qwen3-235B at pp 32 x vpp 3: 96 slots, the embedding and the loss alone.
  const auto layers = layers_per_virtual_stage(accounted(32, 3, true, true), 94);
  EXPECT_EQ(layers.front(), 0);
  EXPECT_EQ(layers.back(), 0);
  EXPECT_EQ(std::count(layers.begin(), layers.end(), 1), 94);
}

TEST(SplitLayers, AccountedSplitNeedsItsDivisibilityAndNoExplicitCounts) {
  EXPECT_EQ(thrown_field([] { split_layers(accounted(8, 4, true, true), 93); }), "account_embedding");
  EXPECT_EQ(thrown_field([] { split_layers(accounted(8, 1, false, true), 94); }), "account_loss");
  Plan both = accounted(8, 1, true, true);
  both.first_stage_layers = 10;
  EXPECT_EQ(thrown_field([&] { split_layers(both, 94); }), "account_embedding");
}

}  // namespace
}  // namespace tessera
