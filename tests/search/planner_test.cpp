// The planner against what must hold of an exhaustive search, and against published plans.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <filesystem>
#include <fmt/core.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "common/export_cases.h"
#include "common/thrown_field.h"
#include "cost/cost_model.h"
#include "evaluation/validation.h"
#include "formats/csv_table.h"
#include "formats/json_fields.h"
#include "formats/plan_constraints_text.h"
#include "formats/plan_text.h"
#include "report/plan_report.h"
#include "search/plan_space.h"
#include "search/planner.h"

namespace tessera {
namespace {

using tessera::testing::thrown_field;

PlannerOptions options(std::size_t top_k = 5) {
  PlannerOptions o;
  o.top_k = top_k;
  o.threads = 2;
  return o;
}

// The best plan is at least as fast as any plan the user could write down (here: the SC'21
// layout for GPT-3 1T), and the printed time is exactly estimate()'s for that plan.
TEST(Planner, BestBeatsThePublishedOneTrillionLayout) {
  const ModelSpec model = builtin_model("gpt3-1t");
  const Cluster cluster = load_cluster("a100-sxm-80gb:3072");
  const Workload w{3072, 2048};
  const PlanSearch s = search_plans(model, cluster, w, {}, options());
  ASSERT_FALSE(s.plans.empty());
  const PlanRequest published = load_plan("tp=8,pp=64,mb=1,gbs=3072,seq=2048,recompute=full", model, cluster);
  const Estimate ref = estimate(model, cluster, published.plan, published.workload);
  EXPECT_LE(s.plans[0].estimate.iteration_time_s, ref.iteration_time_s);
  const Estimate again = estimate(model, cluster, s.plans[0].plan, w);
  EXPECT_EQ(again.iteration_time_s, s.plans[0].estimate.iteration_time_s);
  EXPECT_GT(s.evaluated, s.feasible);
  EXPECT_GT(s.feasible, 0);
}

// Ranked best first; every printed plan fits and is valid.
TEST(Planner, PlansAreSortedValidAndFit) {
  const ModelSpec model = builtin_model("llama3-8b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:64");
  const Workload w{512, 8192};
  const PlanSearch s = search_plans(model, cluster, w, {}, options(10));
  ASSERT_EQ(s.plans.size(), 10u);
  for (std::size_t i = 0; i < s.plans.size(); ++i) {
    EXPECT_NO_THROW(validate_plan(s.plans[i].plan, model, cluster, w));
    EXPECT_TRUE(s.plans[i].estimate.fits);
    if (i > 0) {
      // Plans within kTimeTieFraction of each other are ties, ordered by memory (planner.h).
      EXPECT_LE(s.plans[i - 1].estimate.iteration_time_s,
                s.plans[i].estimate.iteration_time_s * (1.0 + kTimeTieFraction));
    }
  }
}

// --fix pins a degree: every plan has it.
TEST(Planner, FixedDegreesAreKept) {
  const ModelSpec model = builtin_model("llama3-70b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:256");
  PlanConstraints fix;
  fix.tp = 4;
  fix.recompute = Recompute::full;
  const PlanSearch s = search_plans(model, cluster, {256, 4096}, fix, options());
  ASSERT_FALSE(s.plans.empty());
  for (const auto& r : s.plans) {
    EXPECT_EQ(r.plan.tp, 4);
    EXPECT_EQ(r.plan.recompute, Recompute::full);
  }
}

// Exhaustive: a smaller memory budget can only remove plans, never find a faster one.
TEST(Planner, TighterMemoryNeverFindsAFasterPlan) {
  const ModelSpec model = builtin_model("gpt3-175b");
  const Cluster cluster = load_cluster("a100-sxm-80gb:512");
  const Workload w{1024, 2048};
  // Exhaustive, so that `feasible` counts every plan that fits (the pruned search stops costing
  // plans that cannot rank).
  PlannerOptions all = options(1);
  all.exhaustive = true;
  const PlanSearch loose = search_plans(model, cluster, w, {}, all);
  PlanConstraints tight;
  tight.max_memory_gib = 40.0;
  const PlanSearch strict = search_plans(model, cluster, w, tight, all);
  // The pruned search finds the same best plans.
  EXPECT_EQ(search_plans(model, cluster, w, tight, options(1)).plans[0].estimate.iteration_time_s,
            strict.plans[0].estimate.iteration_time_s);
  ASSERT_FALSE(loose.plans.empty());
  ASSERT_FALSE(strict.plans.empty());
  EXPECT_LE(strict.feasible, loose.feasible);
  EXPECT_GE(strict.plans[0].estimate.iteration_time_s, loose.plans[0].estimate.iteration_time_s);
  EXPECT_LE(strict.plans[0].estimate.peak_memory_bytes, 40.0 * 1024 * 1024 * 1024);
}

// Nothing fits: no plans, and the smallest peak the search saw is reported (it exceeds the budget).
TEST(Planner, InfeasibleRequestReportsTheMemoryItWouldNeed) {
  const ModelSpec model = builtin_model("llama3.1-405b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:8");
  const PlanSearch s = search_plans(model, cluster, {8, 8192}, {}, options());
  EXPECT_TRUE(s.plans.empty());
  EXPECT_EQ(s.feasible, 0);
  EXPECT_GT(s.min_peak_memory_bytes, cluster.gpu.usable_memory_gib * 1024.0 * 1024 * 1024);
  // With that much memory per GPU the same search finds a plan.
  PlanConstraints roomy;
  roomy.max_memory_gib = s.min_peak_memory_bytes / (1024.0 * 1024 * 1024) * 1.0001;
  const PlanSearch again = search_plans(model, cluster, {8, 8192}, roomy, options());
  EXPECT_FALSE(again.plans.empty());
}

// Published plans whose authors chose them as their best (SC'21 Table 1, Korthikanti et al.'s
// sequence-parallel + selective rows, the Megatron-LM README, MegaScale's baseline, BLOOM,
// MT-NLG). The search space is what the authors' software offered them: the layout (tp, pp, dp,
// vpp, micro-batch; cp needs fused attention, which these A100 runs did not use) and every knob the
// row leaves empty. SC'21, BLOOM and MT-NLG ran Megatron before selective recompute and sequence
// parallelism existed, so their stated recompute / sharding are held; Korthikanti et al.'s subject
// is choosing recompute and sequence parallelism, so for their rows those are searched too.
// Asserted: Tessera's best is predicted at least as fast as the published plan on every row. The
// published plan's rank by the simulated pipeline (what `tessera estimate` prints) among all
// feasible plans is printed; issue 4 asks for the top 10%, which rows where the model prefers
// lower tensor parallelism than the authors chose (SC'21 18.4B-1T, BLOOM, MT-NLG 2240, K22 22B)
// miss, so the count that meets it is a regression floor.
TEST(Planner, PublishedBestPlansAreMatchedAndRankHigh) {
  const std::string path = std::string(TESSERA_SOURCE_DIR) + "/data/validation/public_runs.csv";
  const CsvTable table = parse_csv(json_fields::read_text_file(path, "csv"), path);
  const ValidationReport report = validate_runs(table);
  auto starts_with = [](const std::string& id, const char* prefix) { return id.rfind(prefix, 0) == 0; };
  auto chosen_as_best = [&](const std::string& id) {
    for (const char* prefix : {"sc21-t1-", "mlm-h100-", "megascale-", "bloom-", "mtnlg-"})
      if (starts_with(id, prefix)) return true;
    return starts_with(id, "k22-") && id.find("-sp-sel") != std::string::npos;
  };
  fmt::print("{:<30} {:>12} {:>12} {:>7} {:>9} {:>7}\n", "row", "published_s", "best_s", "rank", "feasible", "top%");
  int rows = 0, in_top_decile = 0;
#if defined(TESSERA_SANITIZED)
  // Sanitizer build: every fourth row (ranking simulates every feasible plan, ~15x slower there);
  // the counts below are the Release build's.
  constexpr int kRowStride = 4;
#else
  constexpr int kRowStride = 1;
#endif
  int seen = 0;
  for (const auto& r : report.rows) {
    if (!chosen_as_best(r.id)) continue;
    ++rows;
    if (seen++ % kRowStride != 0) continue;
    PlanConstraints fix;
    fix.precision = r.plan_value.precision;
    const bool method_searched = starts_with(r.id, "k22-");
    if (!method_searched) {
      if (!r.assumed.count("recompute")) {
        fix.recompute = r.plan_value.recompute;
        fix.recompute_layers = r.plan_value.recompute_layers;
      }
      if (!r.assumed.count("sequence_parallel")) fix.sequence_parallel = r.plan_value.sequence_parallel;
      if (!r.assumed.count("dist_optimizer")) fix.zero = r.plan_value.zero;
    }
    fix.defaults = r.plan_value;  // the run's attention kernel, overlap and p2p semantics
    fix.overlap_tp_comm = r.plan_value.overlap_tp_comm;
    fix.max_memory_gib = r.cluster.gpu.usable_memory_gib;  // the run ran: no headroom
    PlannerOptions o = options(1);
    o.reference = r.plan_value;
    o.simulate_reference_rank = true;
    const PlanSearch s = search_plans(r.model, r.cluster, r.workload, fix, o);
    ASSERT_FALSE(s.plans.empty()) << r.id;
    const double best = s.plans[0].estimate.iteration_time_s;
    const double top_pct = 100.0 * static_cast<double>(s.reference_rank) / static_cast<double>(s.feasible);
    fmt::print("{:<30} {:>12.3f} {:>12.3f} {:>7} {:>9} {:>6.2f}%\n", r.id, r.predicted_time_s, best,
               s.reference_rank, s.feasible, top_pct);
    EXPECT_LE(best, r.predicted_time_s * (1.0 + 1e-12)) << r.id;
    EXPECT_GE(s.reference_rank, 1) << r.id;
    EXPECT_LE(s.reference_rank, s.feasible) << r.id;
    if (top_pct <= 10.0) ++in_top_decile;
  }
  fmt::print("published plan within the top 10% of feasible plans: {} of {} rows\n", in_top_decile, rows);
  EXPECT_GE(rows, 33);
  if (kRowStride == 1) {
    EXPECT_GE(in_top_decile, 27);
  }
}

// ---- Issue 11: the MoE / FP8 / recompute-module space, aliases, pruning -------------------------

PlanConstraints with_fp8() {
  PlanConstraints c;
  c.precision_choices = {Precision::bf16, Precision::fp8};
  return c;
}

// No two listed plans are one configuration: every plan is canonical, no two are equal, and no two
// have estimates identical in every term (values the cost model treats alike).
void expect_distinct(const PlanSearch& s, const ModelSpec& model) {
  for (std::size_t i = 0; i < s.plans.size(); ++i) {
    const Plan& a = s.plans[i].plan;
    EXPECT_TRUE(same_configuration(a, canonical_plan(a, model))) << i;
    for (std::size_t j = 0; j < i; ++j) {
      EXPECT_FALSE(same_configuration(a, s.plans[j].plan)) << i << " vs " << j;
      const Estimate& x = s.plans[i].estimate;
      const Estimate& y = s.plans[j].estimate;
      EXPECT_FALSE(x.iteration_time_s == y.iteration_time_s && x.peak_memory_bytes == y.peak_memory_bytes &&
                   x.time.compute_s == y.time.compute_s && x.time.dp_comm_s == y.time.dp_comm_s &&
                   x.time.ep_comm_s == y.time.ep_comm_s && x.memory.weights_bytes == y.memory.weights_bytes &&
                   x.memory.gradients_bytes == y.memory.gradients_bytes &&
                   x.memory.optimizer_bytes == y.memory.optimizer_bytes)
          << "plans " << j << " and " << i << " are costed identically";
    }
  }
}

TEST(Planner, NoTwoListedPlansAreOneConfiguration) {
  // Many of the closed form's best are variants of one layout (FP8 param gather, dispatcher,
  // sharding at one time): a deeper re-scored pool fills the list after they are dropped.
  PlannerOptions deep = options(40);
  deep.rescored = 400;
  {
    const ModelSpec model = builtin_model("mixtral-8x7b");
    const Cluster cluster = load_cluster("h100-sxm-80gb:64");
    const PlanSearch s = search_plans(model, cluster, {256, 4096}, with_fp8(), deep);
    ASSERT_GE(s.plans.size(), 30u);  // at most 40: variants of one layout tying in time are dropped
    expect_distinct(s, model);
  }
  {
    const ModelSpec model = builtin_model("llama3-8b");
    const Cluster cluster = load_cluster("h100-sxm-80gb:64");
    const PlanSearch s = search_plans(model, cluster, {512, 8192}, with_fp8(), deep);
    ASSERT_EQ(s.plans.size(), 40u);
    expect_distinct(s, model);
    // A dense model has no expert keys to vary.
    for (const auto& r : s.plans) {
      EXPECT_EQ(r.plan.etp, 0);
      EXPECT_EQ(r.plan.dispatcher, MoeDispatcher::alltoall);
      EXPECT_FALSE(r.plan.overlap_ep);
    }
  }
}

// ZeRO-3 under pipelining without re-sharding after forward (torchtitan's FSDP2 + PP default)
// keeps the weights gathered for the step: the cost model costs it exactly as zero1 (same time,
// same memory). Both values are enumerated; ranked, one plan stays, the simpler zero1.
TEST(Planner, Zero3WithPipeliningIsListedOnce) {
  const ModelSpec model = builtin_model("llama3-70b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:256");
  const Workload w{256, 4096};
  PlanConstraints fix;
  fix.pp = 4;
  fix.tp = 8;
  fix.zero_choices = {OptimizerSharding::zero1, OptimizerSharding::zero3};
  fix.defaults.reshard_after_forward = false;
  const PlanSearch s = search_plans(model, cluster, w, fix, options(20));
  ASSERT_FALSE(s.plans.empty());
  EXPECT_GT(s.aliases, 0);
  expect_distinct(s, model);
  for (const auto& r : s.plans) {
    Plan twin = r.plan;
    twin.zero = r.plan.zero == OptimizerSharding::zero1 ? OptimizerSharding::zero3 : OptimizerSharding::zero1;
    const Estimate a = estimate_analytical(model, cluster, r.plan, w);
    const Estimate b = estimate_analytical(model, cluster, twin, w);
    if (a.iteration_time_s != b.iteration_time_s || a.peak_memory_bytes != b.peak_memory_bytes) continue;
    // The twin is costed alike: only the simpler (zero1) is listed.
    EXPECT_EQ(r.plan.zero, OptimizerSharding::zero1);
    for (const auto& other : s.plans) EXPECT_FALSE(same_configuration(other.plan, twin));
  }
}

// The memory and time-bound pruning keeps the closed-form ranking exact: the same top plans as
// costing every candidate, for an MoE model with every new key searched and for a dense model.
TEST(Planner, PrunedSearchEqualsExhaustiveSearch) {
  struct Case {
    const char* model;
    const char* cluster;
    Workload workload;
  };
  // gpt3-175b on 384 A100: 96 layers, so vpp up to 16 at pp 6, where a micro-batch's pipeline p2p
  // (it crosses every boundary vpp times on the way in and out) grows with the micro-batch; a
  // bound that counted it at the largest micro-batch pruned plans of the top 64.
  for (const Case& c : {Case{"mixtral-8x7b", "h100-sxm-80gb:32", {128, 4096}},
                        Case{"qwen3-30b-a3b", "h100-sxm-80gb:16", {64, 4096}},
                        Case{"llama3-8b", "h100-sxm-80gb:16", {64, 8192}},
                        Case{"gpt3-175b", "a100-sxm-80gb:384", {1536, 2048}}}) {
    const ModelSpec model = builtin_model(c.model);
    const Cluster cluster = load_cluster(c.cluster);
    const bool deep = std::string(c.model) == "gpt3-175b";
    PlannerOptions pruned = options(deep ? 20 : 10);
    pruned.rescored = deep ? 64 : 10;
    pruned.threads = 1;  // the pruning bound alone, not the workers' timing
    PlannerOptions all = pruned;
    all.exhaustive = true;
    all.threads = 2;  // costs everything whatever the timing
#ifdef TESSERA_SANITIZED
    if (deep) continue;  // 400,000 plans: one Release run checks it
#endif
    const PlanSearch a = search_plans(model, cluster, c.workload, with_fp8(), pruned);
    const PlanSearch b = search_plans(model, cluster, c.workload, with_fp8(), all);
    ASSERT_EQ(a.plans.size(), b.plans.size()) << c.model;
    EXPECT_LT(a.evaluated, b.evaluated) << c.model;
    for (std::size_t i = 0; i < a.plans.size(); ++i) {
      EXPECT_EQ(a.plans[i].estimate.iteration_time_s, b.plans[i].estimate.iteration_time_s) << c.model << " #" << i;
      EXPECT_TRUE(same_configuration(a.plans[i].plan, b.plans[i].plan)) << c.model << " #" << i;
    }
    fmt::print("{}: pruned {} plans, exhaustive {}\n", c.model, a.evaluated, b.evaluated);
  }
}

// When nothing fits, the smallest peak the answer names is the smallest of the whole space (issue
// 32: "the smallest peak is 145.5 GiB (zero3)" while zero=none peaked at 142.4): on one GPU ZeRO
// shards nothing and adds its gather buffers, so the leanest plan is not the most sharded one, and
// the pruned search must still cost it.
TEST(Planner, SmallestPeakWhenNothingFitsIsTheSpacesMinimum) {
  const ModelSpec model = builtin_model("llama3-8b");
  const Cluster cluster = load_cluster("h200:1");
  const Workload w{8, 8192};
  PlannerOptions pruned = options(5);
  pruned.threads = 1;
  PlannerOptions all = pruned;
  all.exhaustive = true;
  const PlanSearch a = search_plans(model, cluster, w, with_fp8(), pruned);
  const PlanSearch b = search_plans(model, cluster, w, with_fp8(), all);
  ASSERT_TRUE(a.plans.empty());
  ASSERT_TRUE(b.plans.empty());
  EXPECT_EQ(a.min_peak_memory_bytes, b.min_peak_memory_bytes);
  EXPECT_EQ(b.min_memory_plan.zero, OptimizerSharding::none) << "one GPU: no sharding is leanest";
  EXPECT_TRUE(same_configuration(a.min_memory_plan, b.min_memory_plan));
}

// The workers share one pruning threshold, so which plans each costs depends on their timing, but
// the list does not: every thread count lists the same plans with the same times.
TEST(Planner, EveryThreadCountListsTheSamePlans) {
  const ModelSpec model = builtin_model("mixtral-8x7b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:32");
  const Workload w{128, 4096};
  PlannerOptions one = options(10);
  one.threads = 1;
  const PlanSearch a = search_plans(model, cluster, w, with_fp8(), one);
  ASSERT_FALSE(a.plans.empty());
  for (int threads : {2, 3, 8}) {
    PlannerOptions many = one;
    many.threads = threads;
    const PlanSearch b = search_plans(model, cluster, w, with_fp8(), many);
    ASSERT_EQ(a.plans.size(), b.plans.size()) << threads;
    for (std::size_t i = 0; i < a.plans.size(); ++i) {
      EXPECT_EQ(a.plans[i].estimate.iteration_time_s, b.plans[i].estimate.iteration_time_s) << threads << " #" << i;
      EXPECT_TRUE(same_configuration(a.plans[i].plan, b.plans[i].plan)) << threads << " #" << i;
    }
  }
}

// The enumeration only produces plans validate_plan accepts (the hot loop does not re-check).
TEST(Planner, EveryCandidateIsValid) {
  for (const char* name : {"mixtral-8x7b", "deepseek-v3"}) {
    const ModelSpec model = builtin_model(name);
    const Cluster cluster = load_cluster(std::string(name) == "deepseek-v3" ? "b200:256" : "h100-sxm-80gb:32");
    PlannerOptions o = options(3);
    o.validate_every_candidate = true;
    const PlanSearch s = search_plans(model, cluster, {256, 4096}, with_fp8(), o);
    EXPECT_GT(s.evaluated, 0) << name;
    EXPECT_EQ(s.invalid, 0) << name;
  }
}

// The MoE search space: EP overlap (with delayed wgrad), every dispatcher, etp < tp, the module
// sets and FP8 with the GPU's natural recipe all reach the ranking somewhere; --fix pins each key.
TEST(Planner, SearchesAndPinsTheMoeKeys) {
  const ModelSpec model = builtin_model("mixtral-8x7b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:64");
  const Workload w{256, 4096};
  PlanConstraints fix = parse_constraints(
      "etp=1,dispatcher=flex,overlap_ep=1,delay_wgrad=1,recompute_modules=layernorm+moe_act,fp8_param_gather=1,tp=2");
  const PlanSearch s = search_plans(model, cluster, w, fix, options(10));
  ASSERT_FALSE(s.plans.empty());
  for (const auto& r : s.plans) {
    EXPECT_EQ(r.plan.expert_tp(), 1);
    EXPECT_EQ(r.plan.dispatcher, MoeDispatcher::flex);
    EXPECT_TRUE(r.plan.overlap_ep && r.plan.delay_wgrad);
    EXPECT_EQ(r.plan.recompute, Recompute::selective);
    EXPECT_EQ(r.plan.recompute_modules, unsigned{kRecomputeLayernorm | kRecomputeMoeAct});
    EXPECT_EQ(r.plan.precision, Precision::fp8);
    EXPECT_EQ(r.plan.fp8_recipe, Fp8Recipe::tensorwise);  // Hopper's natural recipe
    EXPECT_TRUE(r.plan.fp8_param_gather);
    EXPECT_GT(r.plan.ep, 1);  // EP overlap needs expert parallelism
  }
  // On Blackwell the natural recipe is MXFP8.
  PlanConstraints b200;
  b200.precision = Precision::fp8;
  const PlanSearch sb = search_plans(model, load_cluster("b200:64"), w, b200, options(3));
  ASSERT_FALSE(sb.plans.empty());
  for (const auto& r : sb.plans) EXPECT_EQ(r.plan.fp8_recipe, Fp8Recipe::mxfp8);
  // Pinned keys that only exist under another pin it; contradictions are errors naming the key.
  EXPECT_EQ(parse_constraints("recompute_modules=moe_act").recompute, Recompute::selective);
  EXPECT_EQ(parse_constraints("fp8_recipe=blockwise").precision, Precision::fp8);
  EXPECT_EQ(parse_constraints("delay_wgrad=1").overlap_ep, true);
  EXPECT_EQ(thrown_field([] { parse_constraints("recompute=full,recompute_modules=moe_act"); }), "fix.recompute_modules");
  EXPECT_EQ(thrown_field([] { parse_constraints("precision=bf16,fp8_recipe=mxfp8"); }), "fix.fp8_recipe");
  EXPECT_EQ(thrown_field([] { parse_constraints("dispatcher=deepep"); }), "dispatcher");
  EXPECT_EQ(thrown_field([] { parse_constraints("etp=x"); }), "fix.etp");
}

TEST(PlanSpace, ModuleSetsAreCanonicalAndFitTheModel) {
  const auto dense = searched_recompute_modules(builtin_model("llama3-70b"));
  EXPECT_EQ(dense, std::vector<unsigned>{0u});  // core_attn only
  const ModelSpec v3 = builtin_model("deepseek-v3");
  const auto mla = searched_recompute_modules(v3);
  EXPECT_NE(std::find(mla.begin(), mla.end(), unsigned{kRecomputeMlaUpProj}), mla.end());
  const auto moe = searched_recompute_modules(builtin_model("mixtral-8x7b"));
  for (unsigned m : moe) {
    EXPECT_EQ(m & kRecomputeMlaUpProj, 0u);  // no MLA
    EXPECT_EQ(m & kRecomputeMlp, 0u);        // every Mixtral layer is MoE: no dense MLP to recompute
  }
  for (const auto* sets : {&dense, &mla, &moe})
    for (std::size_t i = 0; i < sets->size(); ++i)
      for (std::size_t j = 0; j < i; ++j) EXPECT_NE((*sets)[i], (*sets)[j]);
  // Canonical form: what the other keys make meaningless is reset.
  Plan p;
  p.tp = 2;
  p.etp = 2;
  p.dispatcher = MoeDispatcher::flex;
  p.fp8_recipe = Fp8Recipe::blockwise;
  p.recompute = Recompute::selective;
  p.recompute_modules = kRecomputeCoreAttn;
  p.zero = OptimizerSharding::zero1;
  p.reshard_after_forward = false;
  const Plan c = canonical_plan(p, builtin_model("llama3-8b"));
  EXPECT_EQ(c.etp, 0);
  EXPECT_EQ(c.dispatcher, MoeDispatcher::alltoall);
  EXPECT_EQ(c.fp8_recipe, Plan{}.fp8_recipe);
  EXPECT_EQ(c.recompute_modules, 0u);
  EXPECT_TRUE(c.reshard_after_forward);
  EXPECT_EQ(natural_fp8_recipe(find_gpu("h100-sxm-80gb")), Fp8Recipe::tensorwise);
  EXPECT_EQ(natural_fp8_recipe(find_gpu("b200")), Fp8Recipe::mxfp8);
}

// "Will it fit on my GPU": Llama 3.1 8B (the zoo's llama3-8b shape) on one H200 as a plain PyTorch
// loop, 4,096 tokens. Megatron's 18 bytes of state per parameter do not fit; plain PyTorch's 16
// do, with one micro-batch of two sequences and full recompute (measured: 119.99 GiB,
// ../shared/validation/h200/memory.csv), with no optimizer sharding on one GPU; two micro-batches
// of one (gradient accumulation keeps 4 B per parameter of gradients through the second's
// forward, beside autocast's bf16 weight copies) do not.
TEST(Planner, LlamaEightBFitsOneH200AsAPlainPytorchLoop) {
  const ModelSpec model = builtin_model("llama3-8b");
  const Cluster cluster = make_cluster(find_gpu("h200"), 1);
  PlanConstraints fix;
  fix.defaults.framework = TrainingFramework::pytorch;
  const PlanSearch s = search_plans(model, cluster, {2, 4096}, fix, options());
  ASSERT_FALSE(s.plans.empty());
  const Plan& best = s.plans.front().plan;
  EXPECT_TRUE(s.plans.front().estimate.fits);
  EXPECT_EQ(best.zero, OptimizerSharding::none);
  EXPECT_EQ(best.micro_batch, 2);
  EXPECT_EQ(best.recompute, Recompute::full);
  EXPECT_EQ(best.framework, TrainingFramework::pytorch);
  for (const RankedPlan& r : s.plans) EXPECT_EQ(r.plan.zero, OptimizerSharding::none);
  // Megatron's state does not fit there, and the planner says so rather than shard over one GPU.
  const PlanSearch megatron = search_plans(model, cluster, {2, 4096}, {}, options());
  EXPECT_TRUE(megatron.plans.empty());
  EXPECT_EQ(megatron.min_memory_plan.zero, OptimizerSharding::none);
}

// Issue 11: DeepSeek-V3 on 1024 H100 with NVIDIA's DGX Cloud recipe (tp=2, pp=16, ep=64, etp=1,
// dp=32, mb=1, selective recompute of mla_up_proj, distributed optimizer, bf16, 3 + 2 layers on
// the first and last stages, capacity factor 1.0 with padding): it must fit, and the planner's best
// (searched with the same capacity factor) must be at least as fast.
TEST(Planner, DeepSeekV3BeatsThePublishedLayout) {
  const ModelSpec model = builtin_model("deepseek-v3");
  const Cluster cluster = load_cluster("h100-sxm-80gb:1024");
  const PlanRequest published = load_plan(
      "tp=2,pp=16,ep=64,etp=1,cp=1,vpp=1,mb=1,gbs=8192,seq=4096,recompute=selective,recompute_modules=mla_up_proj,"
      "zero=1,precision=bf16,first_stage_layers=3,last_stage_layers=2,capacity_factor=1",
      model, cluster);
  EXPECT_EQ(published.plan.dp, 32);
  const Estimate ref = estimate(model, cluster, published.plan, published.workload);
  EXPECT_TRUE(ref.fits) << ref.peak_memory_bytes / (1024.0 * 1024 * 1024) << " GiB";
  PlanConstraints fix = with_fp8();
  fix.defaults.capacity_factor = 1.0;
  const PlanSearch s = search_plans(model, cluster, published.workload, fix, options(5));
  ASSERT_FALSE(s.plans.empty());
  EXPECT_LE(s.plans[0].estimate.iteration_time_s, ref.iteration_time_s);
  EXPECT_EQ(s.invalid, 0);
  expect_distinct(s, model);
  fmt::print("deepseek-v3: published {:.3f} s ({:.1f} GiB), best {:.3f} s; {} plans in {:.2f} s\n",
             ref.iteration_time_s, ref.peak_memory_bytes / (1024.0 * 1024 * 1024),
             s.plans[0].estimate.iteration_time_s, s.evaluated, s.search_time_s);
}

// ---- Issue 12: honest lists, memory headroom, TP-communication overlap -------------------------

// The export cases (tests/common/export_cases.h) on at most this many GPUs: every kind (dense,
// MoE, cp, vpp, FP8, each sharding) inside a test's time budget.
constexpr long long kListCaseMaxGpus = 64;

struct ListCase {
  ModelSpec model;
  Cluster cluster;
  Workload workload;
  PlanSearch search;
};

std::vector<ListCase> list_cases() {
  std::vector<ListCase> out;
  for (const auto& c : tessera::testing::kExportCases) {
    const Cluster cluster = load_cluster(c.cluster);
    if (cluster.gpus() > kListCaseMaxGpus) continue;
    const ModelSpec model = builtin_model(c.model);
    const Workload w{c.gbs, c.seq == 0 ? model.max_context : c.seq};
    PlanConstraints fix = parse_constraints(c.fix);
    if (fix.zero && *fix.zero == OptimizerSharding::zero2) continue;  // not searched (planner.h)
    out.push_back({model, cluster, w, search_plans(model, cluster, w, fix, options(8))});
  }
  return out;
}

const std::vector<ListCase>& cached_list_cases() {
  static const std::vector<ListCase> cases = list_cases();
  return cases;
}

bool ties(double a_s, double b_s) { return std::abs(a_s - b_s) <= kTimeTieFraction * std::max(a_s, b_s); }

// No entry is a configuration another entry already is, nor a variant of a better entry with the
// same layout (tp, pp, ep, etp, vpp, recompute, precision) tying in time with no less memory and
// no fewer node crossings (zero1 / zero3 costing the same, dp and cp swapped, idle switches).
TEST(Planner, TopKListsHoldNoTwoEntriesOfOneConfiguration) {
  ASSERT_GE(cached_list_cases().size(), 10u);
  for (const ListCase& k : cached_list_cases()) {
    const auto& plans = k.search.plans;
    SCOPED_TRACE(k.model.name + " on " + std::to_string(k.cluster.gpus()) + " x " + k.cluster.gpu.key);
    ASSERT_FALSE(plans.empty());
    expect_distinct(k.search, k.model);
    for (std::size_t i = 0; i < plans.size(); ++i)
      for (std::size_t j = 0; j < i; ++j) {
        const Plan& a = plans[j].plan;
        const Plan& b = plans[i].plan;
        const bool same_layout = std::tie(a.tp, a.pp, a.ep, a.etp, a.vpp, a.recompute, a.recompute_layers,
                                          a.recompute_modules, a.precision) ==
                                 std::tie(b.tp, b.pp, b.ep, b.etp, b.vpp, b.recompute, b.recompute_layers,
                                          b.recompute_modules, b.precision);
        EXPECT_FALSE(same_layout && ties(plans[i].estimate.iteration_time_s, plans[j].estimate.iteration_time_s) &&
                     plans[i].estimate.peak_memory_bytes >= plans[j].estimate.peak_memory_bytes &&
                     cross_node_groups(b, k.cluster) >= cross_node_groups(a, k.cluster))
            << "#" << i + 1 << " is a dominated variant of #" << j + 1;
      }
  }
}

// A plan ranked below a faster one only inside a tie, and then it has less memory (or as much and
// no more groups crossing nodes).
TEST(Planner, TiesAreBrokenByMemoryThenNodeCrossings) {
  for (const ListCase& k : cached_list_cases()) {
    const auto& plans = k.search.plans;
    for (std::size_t i = 0; i < plans.size(); ++i)
      for (std::size_t j = i + 1; j < plans.size(); ++j) {
        const Estimate& a = plans[i].estimate;
        const Estimate& b = plans[j].estimate;
        if (b.iteration_time_s >= a.iteration_time_s) continue;
        EXPECT_TRUE(ties(a.iteration_time_s, b.iteration_time_s)) << k.model.name << " #" << i + 1;
        EXPECT_TRUE(a.peak_memory_bytes < b.peak_memory_bytes ||
                    (a.peak_memory_bytes == b.peak_memory_bytes &&
                     cross_node_groups(plans[i].plan, k.cluster) <= cross_node_groups(plans[j].plan, k.cluster)))
            << k.model.name << " #" << i + 1 << " vs #" << j + 1;
      }
  }
}

// The "why" line never gives a bare 0.0% gap: a tie says so and names what else differs.
TEST(Planner, WhyNamesTheRealDifference) {
  for (const ListCase& k : cached_list_cases()) {
    const std::string why = why_winner(k.search, k.cluster, k.workload);
    if (k.search.plans.size() < 2) continue;
    EXPECT_EQ(why.find("(0.0%)"), std::string::npos) << why;
    EXPECT_NE(why.find("differs in"), std::string::npos) << why;
  }
  // Two plans costed alike: the line says the times are equal and what else differs.
  const ListCase& k = cached_list_cases().front();
  PlanSearch twin = k.search;
  twin.plans.resize(2);
  twin.plans[1].estimate = twin.plans[0].estimate;
  twin.plans[1].estimate.peak_memory_bytes += 1024.0 * 1024 * 1024;
  const std::string why = why_winner(twin, k.cluster, k.workload);
  EXPECT_NE(why.find("equal time"), std::string::npos) << why;
  EXPECT_NE(why.find("1.0 GiB less memory"), std::string::npos) << why;
  EXPECT_EQ(why.find("(0.0%)"), std::string::npos) << why;
}

// Without --max-memory-gib plans fit in the usable memory less the documented headroom; with it,
// exactly that limit. The limit in force is in the search result.
TEST(Planner, DefaultHeadroomAndExactOverride) {
  const ModelSpec model = builtin_model("llama3-70b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:64");
  const Workload w{512, 8192};
  const double usable = cluster.gpu.usable_memory_gib * 1024.0 * 1024 * 1024;
  const PlanSearch s = search_plans(model, cluster, w, {}, options());
  EXPECT_DOUBLE_EQ(s.memory_limit_bytes, usable * (1.0 - kDefaultMemoryHeadroomFraction));
  EXPECT_DOUBLE_EQ(s.headroom_bytes, usable * kDefaultMemoryHeadroomFraction);
  ASSERT_FALSE(s.plans.empty());
  for (const auto& r : s.plans) EXPECT_LE(r.estimate.peak_memory_bytes, s.memory_limit_bytes);
  PlanConstraints exact;
  exact.max_memory_gib = cluster.gpu.usable_memory_gib;
  const PlanSearch e = search_plans(model, cluster, w, exact, options());
  EXPECT_DOUBLE_EQ(e.memory_limit_bytes, usable);
  EXPECT_EQ(e.headroom_bytes, 0.0);
  EXPECT_LE(e.plans[0].estimate.iteration_time_s, s.plans[0].estimate.iteration_time_s);
  // Every plan that fits under the headroom fits without it. Counted over the whole space: a
  // pruned search's count also depends on how early a fast plan ends the search.
  PlannerOptions all = options();
  all.exhaustive = true;
  EXPECT_GE(search_plans(model, cluster, w, exact, all).feasible, search_plans(model, cluster, w, {}, all).feasible);
}

// TP-communication overlap is on wherever it is legal (tp > 1 with sequence parallelism), where
// it is never slower and holds the same memory (the dominance the search relies on); --fix
// overlap_tp pins it either way.
TEST(Planner, TpCommOverlapIsSearchedAndPinned) {
  const ModelSpec model = builtin_model("llama3-70b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:64");
  const Workload w{512, 8192};
  const PlanSearch s = search_plans(model, cluster, w, parse_constraints("tp=8"), options());
  ASSERT_FALSE(s.plans.empty());
  for (const auto& r : s.plans) {
    EXPECT_TRUE(r.plan.overlap_tp_comm);
    Plan off = r.plan;
    off.overlap_tp_comm = false;
    const Estimate e = estimate(model, cluster, off, w);
    EXPECT_LT(r.estimate.iteration_time_s, e.iteration_time_s);
    EXPECT_EQ(r.estimate.peak_memory_bytes, e.peak_memory_bytes);
  }
  for (const auto& r : search_plans(model, cluster, w, parse_constraints("overlap_tp=0"), options()).plans)
    EXPECT_FALSE(r.plan.overlap_tp_comm);
  for (const auto& r : search_plans(model, cluster, w, parse_constraints("overlap_tp=1"), options()).plans) {
    EXPECT_TRUE(r.plan.overlap_tp_comm);
    EXPECT_GT(r.plan.tp, 1);
    EXPECT_TRUE(r.plan.sequence_parallel);
  }
  // tp = 1 has no TP group: no overlap.
  for (const auto& r : search_plans(model, cluster, w, parse_constraints("tp=1"), options()).plans)
    EXPECT_FALSE(r.plan.overlap_tp_comm);
}

// FP8 is searched by default on GPUs that have it (every caller, not only the CLI), not on others.
TEST(Planner, Fp8IsSearchedByDefaultWhereTheGpuHasIt) {
  const ModelSpec model = builtin_model("llama3-8b");
  const Workload w{256, 8192};
  const PlanSearch h100 = search_plans(model, load_cluster("h100-sxm-80gb:16"), w, {}, options());
  ASSERT_FALSE(h100.plans.empty());
  EXPECT_EQ(h100.plans[0].plan.precision, Precision::fp8);
  for (const auto& r : search_plans(model, load_cluster("a100-sxm-80gb:16"), w, {}, options()).plans)
    EXPECT_EQ(r.plan.precision, Precision::bf16);
}

}  // namespace
}  // namespace tessera
