// assess_confidence against a small class table written here: each extrapolation rule fires on
// the case it names and stays silent inside the validated range.
#include "search/confidence.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"

namespace tessera {
namespace {

constexpr std::int64_t kValidatedGpus = 1024;
constexpr std::int64_t kValidatedSeq = 8192;

std::vector<AccuracyClass> classes() {
  AccuracyClass dense;
  dense.name = "dense-h100";
  dense.description = "dense 16-bit, Hopper";
  dense.gpu_families = {"hopper"};
  dense.precisions = {Precision::bf16};
  dense.frameworks = {TrainingFramework::megatron};
  dense.runs = 10;
  dense.sources = 2;
  dense.median_error_pct = 5.3;
  dense.p90_error_pct = 15.8;
  dense.max_gpus = kValidatedGpus;
  dense.max_seq = kValidatedSeq;
  dense.max_cp_nodes = 1;
  AccuracyClass moe = dense;
  moe.name = "moe";
  moe.moe = true;
  moe.precisions = {Precision::bf16, Precision::fp8};
  moe.max_ep_nodes = 8;
  return {dense, moe};
}

Plan plan(std::int64_t tp, std::int64_t pp, std::int64_t dp, std::int64_t cp = 1, std::int64_t ep = 1) {
  Plan p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  p.cp = cp;
  p.ep = ep;
  p.sequence_parallel = tp > 1;
  return p;
}

bool mentions(const Confidence& c, const std::string& what) {
  return std::any_of(c.extrapolations.begin(), c.extrapolations.end(),
                     [&](const std::string& x) { return x.find(what) != std::string::npos; });
}

TEST(Confidence, DenseHopperBf16InsideTheRangeIsValidated) {
  const Confidence c = assess_confidence(builtin_model("llama3-70b"), load_cluster("h100-sxm-80gb:64"), plan(8, 2, 4),
                                         {512, 8192}, "hopper", classes());
  EXPECT_TRUE(c.validated);
  EXPECT_EQ(c.class_name, "dense-h100");
  EXPECT_EQ(c.runs, 10);
  EXPECT_DOUBLE_EQ(c.median_error_pct, 5.3);
  EXPECT_TRUE(c.extrapolations.empty());
}

TEST(Confidence, AGpuFamilyWithoutRowsHasAssumedEfficiencies) {
  const Confidence c = assess_confidence(builtin_model("llama3-8b"), load_cluster("b200:16"), plan(1, 1, 16),
                                         {256, 8192}, "b200", classes());
  EXPECT_FALSE(c.validated);
  EXPECT_TRUE(mentions(c, "b200 efficiencies assumed"));
  EXPECT_EQ(c.class_name, "dense-h100");  // the nearest class of the same kind, for its error
  EXPECT_EQ(c.extrapolations.size(), 1u);  // no range checks against another family's runs
}

TEST(Confidence, SeqBeyondTheContextAndTheValidatedRange) {
  const ModelSpec m = builtin_model("llama3-8b");
  const std::int64_t seq = 2 * m.max_context;
  const Confidence c =
      assess_confidence(m, load_cluster("h100-sxm-80gb:64"), plan(8, 1, 4, 2), {64, seq}, "hopper", classes());
  EXPECT_FALSE(c.validated);
  EXPECT_TRUE(mentions(c, "beyond the model's context"));
  EXPECT_TRUE(mentions(c, "validated up to 8192"));
}

TEST(Confidence, ContextParallelAcrossNodes) {
  // tp 8 x cp 4 = 32 consecutive ranks: 4 nodes of 8.
  const Confidence c = assess_confidence(builtin_model("llama3-70b"), load_cluster("h100-sxm-80gb:256"),
                                         plan(8, 2, 4, 4), {64, 8192}, "hopper", classes());
  EXPECT_TRUE(mentions(c, "context parallelism across 4 nodes"));
  EXPECT_FALSE(c.validated);
}

TEST(Confidence, MoeDispatchBeyondTheValidatedNodeSpanAndGpuCount) {
  const Cluster cluster = load_cluster("h800:2048");
  const ModelSpec m = builtin_model("deepseek-v3");
  // ep 64 with etp = tp = 2: 128 ranks, 16 nodes (the table validated 8).
  const Confidence wide = assess_confidence(m, cluster, plan(2, 8, 128, 1, 64), {8192, 4096}, "hopper", classes());
  EXPECT_TRUE(mentions(wide, "MoE dispatch across 16 nodes"));
  EXPECT_TRUE(mentions(wide, "2048 GPUs (validated up to 1024)"));
  EXPECT_EQ(wide.class_name, "moe");
  const Confidence narrow = assess_confidence(m, load_cluster("h800:1024"), plan(1, 8, 128, 1, 64), {4096, 4096},
                                              "hopper", classes());
  EXPECT_TRUE(narrow.validated) << narrow.extrapolations.front();
}

TEST(Confidence, Fp8WithoutValidatedFp8RunsAndAnotherFramework) {
  Plan p = plan(8, 2, 4);
  p.precision = Precision::fp8;
  const ModelSpec m = builtin_model("llama3-70b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:64");
  // The MoE class has FP8 runs on Hopper, the dense class none.
  EXPECT_TRUE(mentions(assess_confidence(m, cluster, p, {512, 8192}, "hopper", classes()),
                       "no validated fp8 runs in class dense-h100"));
  std::vector<AccuracyClass> bf16_only = classes();
  bf16_only[1].precisions = {Precision::bf16};
  EXPECT_TRUE(mentions(assess_confidence(m, cluster, p, {512, 8192}, "hopper", bf16_only),
                       "no validated fp8 runs on this GPU family"));
  p.precision = Precision::bf16;
  p.framework = TrainingFramework::torchtitan;
  EXPECT_TRUE(mentions(assess_confidence(m, cluster, p, {512, 8192}, "hopper", classes()), "framework torchtitan"));
}

TEST(Confidence, NodesSpannedIsTheCeilingOverTheNodeSize) {
  const Cluster cluster = load_cluster("h100-sxm-80gb:64");  // 8 per node
  EXPECT_EQ(nodes_spanned(1, cluster), 1);
  EXPECT_EQ(nodes_spanned(8, cluster), 1);
  EXPECT_EQ(nodes_spanned(9, cluster), 2);
  EXPECT_EQ(nodes_spanned(64, cluster), 8);
  Plan p = plan(2, 1, 32, 1, 8);
  p.etp = 1;
  EXPECT_EQ(expert_group_nodes(p, cluster), 1);
  p.etp = 0;  // = tp: 16 ranks
  EXPECT_EQ(expert_group_nodes(p, cluster), 2);
}

TEST(Confidence, TpCommOverlapExtrapolatesUnlessARunUsedIt) {
  const ModelSpec m = builtin_model("llama3-70b");
  const Cluster c = load_cluster("h100-sxm-80gb:64");
  Plan overlapped = plan(8, 2, 4);
  overlapped.overlap_tp_comm = true;
  const Confidence off = assess_confidence(m, c, plan(8, 2, 4), {512, 8192}, "hopper", classes());
  const Confidence on = assess_confidence(m, c, overlapped, {512, 8192}, "hopper", classes());
  EXPECT_FALSE(mentions(off, "TP-communication overlap"));
  EXPECT_TRUE(mentions(on, "TP-communication overlap"));
  EXPECT_FALSE(on.validated);
  std::vector<AccuracyClass> with_overlap = classes();
  for (AccuracyClass& k : with_overlap) k.tp_comm_overlap = true;
  EXPECT_TRUE(assess_confidence(m, c, overlapped, {512, 8192}, "hopper", with_overlap).validated);
}

TEST(Confidence, AnUnvalidatedFamilyLendsTheErrorOfTheSamePrecision) {
  std::vector<AccuracyClass> table = classes();
  AccuracyClass fp8 = table.front();
  fp8.name = "dense-fp8";
  fp8.precisions = {Precision::fp8};
  table.push_back(fp8);
  Plan p = plan(8, 2, 4);
  p.precision = Precision::fp8;
  const Confidence c = assess_confidence(builtin_model("llama3-70b"), load_cluster("b200:64"), p, {512, 8192},
                                         "blackwell", table);
  EXPECT_FALSE(c.validated);
  EXPECT_EQ(c.class_name, "dense-fp8");
  EXPECT_TRUE(mentions(c, "efficiencies assumed"));
}

// ---- the envelope of an estimate (issue 29): each rule fires on its case, silent inside ----

// An estimate inside the dense class's envelope: 40% MFU, collectives partly exposed.
Estimate inside_envelope() {
  Estimate e;
  e.mfu = 0.40;
  e.overlap.ep_total_s = 10.0;
  e.overlap.ep_exposed_s = 5.0;
  e.overlap.zero3_total_s = 10.0;
  e.overlap.zero3_exposed_s = 2.0;
  e.usable_memory_bytes = 80.0;
  e.peak_memory_bytes = 60.0;
  return e;
}

std::vector<AccuracyClass> envelope_classes() {
  std::vector<AccuracyClass> k = classes();
  for (AccuracyClass& c : k) {
    c.max_mfu_pct = 49.0;
    c.max_tp_nodes = 1;
  }
  return k;
}

Confidence confidence_with(const Estimate& e, const Plan& p = plan(8, 2, 4), const std::string& cluster = "h100-sxm-80gb:64",
                const std::string& model = "llama3-70b", const std::vector<AccuracyClass>& k = envelope_classes()) {
  return assess_confidence(builtin_model(model), load_cluster(cluster), p, {512, 8192}, "hopper", k, &e);
}

TEST(ConfidenceEnvelope, InsideItIsValidated) {
  const Confidence c = confidence_with(inside_envelope());
  EXPECT_TRUE(c.validated) << (c.extrapolations.empty() ? "" : c.extrapolations.front());
}

TEST(ConfidenceEnvelope, MfuAboveEveryValidatedRun) {
  Estimate e = inside_envelope();
  e.mfu = 0.58;
  const Confidence c = confidence_with(e);
  EXPECT_FALSE(c.validated);
  EXPECT_TRUE(mentions(c, "MFU 58.0% above every validated run of class dense-h100 (at most 49.0%)"));
}

TEST(ConfidenceEnvelope, ExpertCommunicationAlmostEntirelyHidden) {
  Estimate e = inside_envelope();
  e.overlap.ep_exposed_s = 0.0;  // DeepSeek-V3's "0.000 s exposed"
  EXPECT_TRUE(mentions(confidence_with(e), "expert-parallel communication 100% hidden"));
  e.overlap.ep_exposed_s = 0.11 * e.overlap.ep_total_s;  // 89% hidden: inside
  EXPECT_TRUE(confidence_with(e).validated);
}

TEST(ConfidenceEnvelope, Zero3CollectivesAlmostEntirelyHidden) {
  Estimate e = inside_envelope();
  e.overlap.zero3_exposed_s = 0.05 * e.overlap.zero3_total_s;
  EXPECT_TRUE(mentions(confidence_with(e), "ZeRO-3 gathers and reduce-scatters 95% hidden"));
}

TEST(ConfidenceEnvelope, TensorParallelAcrossNodes) {
  const Confidence c = confidence_with(inside_envelope(), plan(16, 1, 4), "h100-sxm-80gb:64");
  EXPECT_TRUE(mentions(c, "tensor parallelism across 2 nodes (validated within 1)"));
  EXPECT_FALSE(c.validated);
}

TEST(ConfidenceEnvelope, AModelWhoseOwnRunsAreBiasedBeyondTheClassMedian) {
  const ModelSpec m = builtin_model("llama3-70b");
  std::vector<AccuracyClass> k = envelope_classes();
  k[0].model_biases = {{model_shape_key(m), "Llama 3 70B", 2, -14.0}};
  EXPECT_TRUE(mentions(confidence_with(inside_envelope(), plan(8, 2, 4), "h100-sxm-80gb:64", "llama3-70b", k),
                       "validated runs (Llama 3 70B) were predicted 14.0% faster than they ran"));
  k[0].model_biases = {{model_shape_key(m), "Llama 3 70B", 2, 3.0}};  // inside the 5.3% median
  EXPECT_TRUE(confidence_with(inside_envelope(), plan(8, 2, 4), "h100-sxm-80gb:64", "llama3-70b", k).validated);
  k[0].model_biases = {{model_shape_key(m), "Llama 3 70B", 1, -14.0}};  // one run is not a bias
  EXPECT_TRUE(confidence_with(inside_envelope(), plan(8, 2, 4), "h100-sxm-80gb:64", "llama3-70b", k).validated);
  k[0].model_biases = {{"L1-h1-a1-E0", "another model", 2, -14.0}};
  EXPECT_TRUE(confidence_with(inside_envelope(), plan(8, 2, 4), "h100-sxm-80gb:64", "llama3-70b", k).validated);
}

TEST(ConfidenceEnvelope, AClassOfOneSourceHasTooFewToSay) {
  std::vector<AccuracyClass> k = envelope_classes();
  k[0].sources = 1;
  const Confidence c = confidence_with(inside_envelope(), plan(8, 2, 4), "h100-sxm-80gb:64", "llama3-70b", k);
  EXPECT_TRUE(c.too_few_sources());
  EXPECT_FALSE(c.validated);
  EXPECT_TRUE(mentions(c, "rests on 1 source: too few to measure its error out of sample"));
}

// Memory: the framework's measured peak error, and a margin inside it marked.
TEST(ConfidenceEnvelope, MemoryMarginInsideTheMeasuredError) {
  Plan p = plan(1, 1, 1);
  p.framework = TrainingFramework::pytorch;
  const std::vector<MemoryAccuracy> memory = {{TrainingFramework::pytorch, 9, 1, 0.1, 0.4, 10, 10}};
  Estimate e = inside_envelope();
  e.peak_memory_bytes = 79.8;  // 0.25% margin
  const ModelSpec m = builtin_model("llama3-8b");
  const Cluster one = load_cluster("h200:1");
  const Confidence tight = assess_confidence(m, one, p, {1, 4096}, "hopper", classes(), &e, memory);
  EXPECT_TRUE(tight.memory_measured);
  EXPECT_NEAR(tight.memory_margin_pct, 0.25, 1e-9);
  EXPECT_TRUE(tight.memory_margin_inside_error);
  e.peak_memory_bytes = 60.0;  // 25% margin
  EXPECT_FALSE(assess_confidence(m, one, p, {1, 4096}, "hopper", classes(), &e, memory).memory_margin_inside_error);
  p.framework = TrainingFramework::megatron;  // no measured peaks for Megatron here
  EXPECT_FALSE(assess_confidence(m, one, p, {1, 4096}, "hopper", classes(), &e, memory).memory_measured);
}

}  // namespace
}  // namespace tessera
