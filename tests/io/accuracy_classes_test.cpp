// data/accuracy_classes.json against what `tessera validate` computes now (like
// validation_accuracy_test.cpp for the documented figures), its JSON round trip, and the
// confidence of real estimates: validated (dense Hopper bf16) and extrapolating (MoE on more
// GPUs than validated, a GPU without validation rows, seq beyond the context).
#include "io/accuracy_classes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "io/csv_table.h"
#include "io/estimate_report.h"
#include "io/gpu_catalog.h"
#include "io/json_fields.h"
#include "io/model_source.h"
#include "io/plan_text.h"
#include "plan/cross_pool_plan.h"

namespace tessera {
namespace {

// The file holds figures rounded to two decimals (scripts/accuracy_classes.py).
constexpr double kRounding = 0.005 + 1e-9;

const std::vector<AccuracyClass>& computed() {
  static const std::vector<AccuracyClass> classes = [] {
    const std::string file = std::string(TESSERA_SOURCE_DIR) + "/../shared/validation/public_runs.csv";
    return accuracy_classes_from(validate_runs(parse_csv(json_fields::read_text_file(file, "file"), file)));
  }();
  return classes;
}

TEST(AccuracyClasses, BuiltinFileEqualsWhatValidationComputesNow) {
  const std::vector<AccuracyClass>& want = computed();
  const std::vector<AccuracyClass>& got = builtin_accuracy_classes();
  ASSERT_EQ(got.size(), want.size()) << "rerun scripts/accuracy_classes.py";
  for (std::size_t i = 0; i < want.size(); ++i) {
    const AccuracyClass& g = got[i];
    const AccuracyClass& w = want[i];
    SCOPED_TRACE(w.name + ": rerun scripts/accuracy_classes.py");
    EXPECT_EQ(g.name, w.name);
    EXPECT_FALSE(g.description.empty());
    EXPECT_EQ(g.moe, w.moe);
    EXPECT_EQ(g.gpu_families, w.gpu_families);
    EXPECT_EQ(g.precisions, w.precisions);
    EXPECT_EQ(g.frameworks, w.frameworks);
    EXPECT_EQ(g.runs, w.runs);
    EXPECT_NEAR(g.median_error_pct, w.median_error_pct, kRounding);
    EXPECT_NEAR(g.p90_error_pct, w.p90_error_pct, kRounding);
    EXPECT_NEAR(g.max_error_pct, w.max_error_pct, kRounding);
    EXPECT_EQ(g.max_gpus, w.max_gpus);
    EXPECT_EQ(g.max_seq, w.max_seq);
    EXPECT_EQ(g.max_ep_nodes, w.max_ep_nodes);
    EXPECT_EQ(g.max_cp_nodes, w.max_cp_nodes);
    EXPECT_EQ(g.tp_comm_overlap, w.tp_comm_overlap);
  }
}

TEST(AccuracyClasses, JsonRoundTrip) {
  const std::vector<AccuracyClass>& classes = builtin_accuracy_classes();
  const std::vector<AccuracyClass> back = accuracy_classes_from_json(accuracy_classes_to_json(classes));
  ASSERT_EQ(back.size(), classes.size());
  for (std::size_t i = 0; i < classes.size(); ++i) {
    EXPECT_EQ(back[i].name, classes[i].name);
    EXPECT_EQ(back[i].precisions, classes[i].precisions);
    EXPECT_EQ(back[i].max_ep_nodes, classes[i].max_ep_nodes);
    EXPECT_DOUBLE_EQ(back[i].p90_error_pct, classes[i].p90_error_pct);
  }
  EXPECT_THROW(accuracy_classes_from_json(nlohmann::json{{"classes", {{{"class", "x"}}}}}), Error);
}

TEST(AccuracyClasses, GpuFamilyIsTheCatalogFamilyOrTheKeys) {
  EXPECT_EQ(confidence_gpu_family(find_gpu("h800")), "hopper");
  EXPECT_EQ(confidence_gpu_family(find_gpu("a100-sxm-80gb")), "ampere");
  EXPECT_EQ(confidence_gpu_family(find_gpu("b200")), "blackwell");  // no validated runs
  GpuSpec custom = find_gpu("h100-sxm-80gb");
  custom.family = std::string(kCustomGpuFamily);  // a GPU file without "family"
  EXPECT_EQ(confidence_gpu_family(custom), "custom");
  custom.family.clear();  // built in code without a family: the key's
  EXPECT_EQ(confidence_gpu_family(custom), "hopper");
}

struct Case {
  ModelSpec model;
  Cluster cluster;
  PlanRequest request;
};

Case load(const std::string& model, const std::string& cluster, const std::string& plan) {
  const ModelSpec m = builtin_model(model);
  const Cluster c = load_cluster(cluster);
  return {m, c, load_plan(plan, m, c)};
}

TEST(AccuracyClasses, Llama70bOnH100IsValidatedInTextAndJson) {
  const Case k = load("llama3-70b", "h100-sxm-80gb:64", "tp=8,pp=2,mb=1,gbs=512,seq=8192,recompute=selective,sp=1,zero=zero1");
  const Confidence c = estimate_confidence(k.model, k.cluster, k.request.plan, k.request.workload);
  EXPECT_TRUE(c.validated);
  EXPECT_EQ(c.class_name, "dense-h100");
  const Estimate e = estimate(k.model, k.cluster, k.request.plan, k.request.workload);
  const std::string table = estimate_to_table(e, k.model, k.cluster, k.request.plan, k.request.workload);
  EXPECT_NE(table.find("confidence  validated: dense 16-bit, Hopper: median"), std::string::npos) << table;
  const nlohmann::json j = estimate_to_json(e, k.model, k.cluster, k.request.plan, k.request.workload);
  EXPECT_TRUE(j.at("confidence").at("validated").get<bool>());
  EXPECT_EQ(j.at("confidence").at("runs").get<std::int64_t>(), c.runs);
  EXPECT_TRUE(j.at("confidence").at("extrapolations").empty());
}

TEST(AccuracyClasses, ExtrapolationsAreNamed) {
  const Case moe = load("deepseek-v3", "h800:2048", "tp=2,pp=8,ep=64,etp=1,mb=1,gbs=8192,seq=4096,sp=1,zero=zero1");
  const Confidence wide = estimate_confidence(moe.model, moe.cluster, moe.request.plan, moe.request.workload);
  EXPECT_FALSE(wide.validated);
  EXPECT_EQ(wide.class_name, "moe");
  EXPECT_NE(confidence_text(wide).find("2048 GPUs (validated up to"), std::string::npos) << confidence_text(wide);

  const Case b200 = load("llama3-8b", "b200:16", "tp=1,pp=1,mb=1,gbs=256,seq=8192");
  const Confidence assumed = estimate_confidence(b200.model, b200.cluster, b200.request.plan, b200.request.workload);
  EXPECT_FALSE(assumed.validated);
  EXPECT_NE(confidence_text(assumed).find("b200 efficiencies assumed"), std::string::npos);

  const Case longer = load("llama3-8b", "h100-sxm-80gb:8", "tp=8,pp=1,mb=1,gbs=8,seq=16384,sp=1");
  const Confidence beyond = estimate_confidence(longer.model, longer.cluster, longer.request.plan, longer.request.workload);
  EXPECT_FALSE(beyond.validated);
  const nlohmann::json j = confidence_to_json(beyond);
  const auto& x = j.at("extrapolations");
  EXPECT_TRUE(std::any_of(x.begin(), x.end(), [](const nlohmann::json& s) {
    return s.get<std::string>().find("beyond the model's context") != std::string::npos;
  }));
}

// A pipeline across pools is never validated (no published run spans GPU types): it says so
// first, and carries each pool's own class and extrapolations, named by the pool.
TEST(AccuracyClasses, CrossPoolPipelinesAreNeverValidated) {
  const ModelSpec model = load_model("llama3-70b");
  const MixedCluster cluster = load_mixed_cluster("a100-sxm-80gb:64+h100-sxm-80gb:64");
  CrossPoolPlan plan;
  plan.base.dp = 4;
  plan.base.micro_batch = 1;
  plan.base.sequence_parallel = true;
  plan.base.zero = OptimizerSharding::zero1;
  plan.segments = {{1, 4, 4, 68, Precision::fp8, Fp8Recipe::tensorwise},
                   {0, 8, 2, 12, Precision::bf16, Fp8Recipe::tensorwise}};
  const Workload w{512, 4096};
  validate_cross_pool_plan(plan, model, cluster, w);
  const Confidence c = cross_pool_confidence(model, cluster, plan, w);
  EXPECT_FALSE(c.validated);
  ASSERT_FALSE(c.extrapolations.empty());
  EXPECT_EQ(c.extrapolations.front(), "one pipeline across GPU types (no measured run)");
  // Both pools' classes, each once, and the largest of their errors.
  Plan h100 = segment_plan(plan, plan.segments[0]), a100 = segment_plan(plan, plan.segments[1]);
  h100.pp = 4;
  a100.pp = 2;
  const Confidence on_h100 = estimate_confidence(model, cluster.pools[1], h100, w);
  const Confidence on_a100 = estimate_confidence(model, cluster.pools[0], a100, w);
  EXPECT_NE(c.class_name.find(on_h100.class_name), std::string::npos) << c.class_name;
  EXPECT_NE(c.class_name.find(on_a100.class_name), std::string::npos) << c.class_name;
  EXPECT_EQ(c.median_error_pct, std::max(on_h100.median_error_pct, on_a100.median_error_pct));
  EXPECT_EQ(c.runs, std::min(on_h100.runs, on_a100.runs));
  EXPECT_EQ(c.extrapolations.size(), 1 + on_h100.extrapolations.size() + on_a100.extrapolations.size());
  EXPECT_NE(confidence_text(c).find("extrapolates: one pipeline across GPU types"), std::string::npos);
}

}  // namespace
}  // namespace tessera
