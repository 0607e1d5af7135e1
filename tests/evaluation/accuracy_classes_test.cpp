// data/accuracy_classes.json against what `tessera validate` computes now (like
// validation_accuracy_test.cpp for the documented figures), its JSON round trip, and the
// confidence of real estimates: validated (dense Hopper bf16) and extrapolating (MoE on more
// GPUs than validated, a GPU without validation rows, seq beyond the context).
#include "evaluation/accuracy_classes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/core.h>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/percentile.h"
#include "formats/csv_table.h"
#include "formats/json_fields.h"
#include "formats/plan_text.h"
#include "plan/cross_pool_plan.h"
#include "report/estimate_report.h"

namespace tessera {
namespace {

// The file holds figures rounded to two decimals.
constexpr double kRounding = 0.005 + 1e-9;

// What scripts/accuracy_classes.py runs: the published runs of ../shared/validation, the H200
// out-of-memory configuration, and the H200 measured peaks.
struct Computed {
  ValidationReport report;
  LeaveOneSourceOut held_out;
  AccuracyTable table;
};

const Computed& computed() {
  static const Computed c = [] {
    const std::string shared = std::string(TESSERA_SOURCE_DIR) + "/data/validation/";
    std::vector<CsvTable> tables;
    for (const std::string& f : {shared + "public_runs.csv", shared + "moe_runs.csv", shared + "h200/runs.csv",
                                std::string(TESSERA_SOURCE_DIR) + "/examples/h200/out_of_memory_run.csv"})
      tables.push_back(parse_csv(json_fields::read_text_file(f, "file"), f));
    Computed out;
    out.report = validate_files(tables);
    out.held_out = leave_one_source_out(concatenate_tables(tables));
    const std::string peaks = shared + "h200/memory.csv";
    const MemoryCheck memory =
        check_memory(read_measured_peaks(parse_csv(json_fields::read_text_file(peaks, "file"), peaks)), out.report);
    out.table = accuracy_table_from(out.report, out.held_out, &memory);
    return out;
  }();
  return c;
}

TEST(AccuracyClasses, BuiltinFileEqualsWhatValidationComputesNow) {
  const std::vector<AccuracyClass>& want = computed().table.classes;
  const std::vector<AccuracyClass>& got = builtin_accuracy_classes();
  ASSERT_EQ(got.size(), want.size()) << "rerun scripts/accuracy_classes.py";
  for (std::size_t i = 0; i < want.size(); ++i) {
    const AccuracyClass& g = got[i];
    const AccuracyClass& w = want[i];
    SCOPED_TRACE(w.name + ": rerun scripts/accuracy_classes.py");
    EXPECT_EQ(g.name, w.name);
    EXPECT_EQ(g.description, w.description);
    EXPECT_EQ(g.moe, w.moe);
    EXPECT_EQ(g.gpu_families, w.gpu_families);
    EXPECT_EQ(g.precisions, w.precisions);
    EXPECT_EQ(g.frameworks, w.frameworks);
    EXPECT_EQ(g.runs, w.runs);
    EXPECT_EQ(g.sources, w.sources);
    EXPECT_NEAR(g.median_error_pct, w.median_error_pct, kRounding);
    EXPECT_NEAR(g.p90_error_pct, w.p90_error_pct, kRounding);
    EXPECT_NEAR(g.max_error_pct, w.max_error_pct, kRounding);
    EXPECT_NEAR(g.median_time_error_pct, w.median_time_error_pct, kRounding);
    EXPECT_NEAR(g.in_sample_median_error_pct, w.in_sample_median_error_pct, kRounding);
    EXPECT_NEAR(g.in_sample_p90_error_pct, w.in_sample_p90_error_pct, kRounding);
    EXPECT_NEAR(g.max_mfu_pct, w.max_mfu_pct, kRounding);
    EXPECT_EQ(g.max_gpus, w.max_gpus);
    EXPECT_EQ(g.max_seq, w.max_seq);
    EXPECT_EQ(g.max_tp_nodes, w.max_tp_nodes);
    EXPECT_EQ(g.max_ep_nodes, w.max_ep_nodes);
    EXPECT_EQ(g.max_cp_nodes, w.max_cp_nodes);
    EXPECT_EQ(g.tp_comm_overlap, w.tp_comm_overlap);
    ASSERT_EQ(g.model_biases.size(), w.model_biases.size());
    for (std::size_t b = 0; b < w.model_biases.size(); ++b) {
      EXPECT_EQ(g.model_biases[b].shape, w.model_biases[b].shape);
      EXPECT_EQ(g.model_biases[b].runs, w.model_biases[b].runs);
      EXPECT_NEAR(g.model_biases[b].mean_time_error_pct, w.model_biases[b].mean_time_error_pct, kRounding);
    }
  }
  const auto& memory = builtin_accuracy_table().memory;
  ASSERT_EQ(memory.size(), computed().table.memory.size());
  for (std::size_t i = 0; i < memory.size(); ++i) {
    EXPECT_EQ(memory[i].framework, computed().table.memory[i].framework);
    EXPECT_EQ(memory[i].runs, computed().table.memory[i].runs);
    EXPECT_NEAR(memory[i].max_error_pct, computed().table.memory[i].max_error_pct, kRounding);
    EXPECT_EQ(memory[i].verdicts_right, computed().table.memory[i].verdicts_right);
  }
}

// The error a confidence prints is its class's leave-one-source-out figure: each class's rows
// predicted by constants refitted without their own source, summarised here by hand.
TEST(AccuracyClasses, PrintedErrorIsTheClassesLeaveOneSourceOutFigure) {
  const Computed& c = computed();
  for (const AccuracyClass& k : builtin_accuracy_classes()) {
    std::vector<double> errors, time_errors;
    std::set<std::string> sources;
    for (const HeldOutRow& r : c.held_out.rows)
      if (r.accuracy_class == k.name) {
        errors.push_back(std::fabs(r.error_pct));
        time_errors.push_back(r.time_error_pct);
        sources.insert(r.source);
      }
    SCOPED_TRACE(k.name);
    ASSERT_FALSE(errors.empty());
    EXPECT_NEAR(k.median_error_pct, percentile(errors, 50), kRounding);
    EXPECT_NEAR(k.p90_error_pct, percentile(errors, 90), kRounding);
    EXPECT_NEAR(k.median_time_error_pct, percentile(time_errors, 50), kRounding);
    EXPECT_EQ(k.sources, static_cast<std::int64_t>(sources.size()));
  }
  // An estimate in a class prints that class's figure, out of sample; a one-source class says so.
  const ModelSpec m = builtin_model("llama3-70b");
  const Cluster cl = load_cluster("h100-sxm-80gb:64");
  const PlanRequest r = load_plan("tp=8,pp=2,mb=1,gbs=512,seq=8192,recompute=selective,sp=1,zero=zero1", m, cl);
  const Confidence conf = estimate_confidence(m, cl, r.plan, r.workload);
  const AccuracyClass& h100 = *std::find_if(builtin_accuracy_classes().begin(), builtin_accuracy_classes().end(),
                                            [](const AccuracyClass& k) { return k.name == "dense-h100"; });
  EXPECT_EQ(conf.median_error_pct, h100.median_error_pct);
  EXPECT_EQ(conf.p90_error_pct, h100.p90_error_pct);
  EXPECT_NE(confidence_text(conf).find(fmt::format("median {:.1f}%, p90 {:.1f}% out of sample", h100.median_error_pct,
                                                   h100.p90_error_pct)),
            std::string::npos)
      << confidence_text(conf);
  // Which way the class's runs went, in the text and the JSON: the published Hopper runs took
  // longer than predicted at the median (the catalog's efficiency is held by the H200 components).
  EXPECT_EQ(conf.median_time_error_pct, h100.median_time_error_pct);
  ASSERT_LT(h100.median_time_error_pct, 0.0);
  EXPECT_NE(confidence_text(conf).find(fmt::format("runs took {:.1f}% longer than predicted at the median",
                                                   -h100.median_time_error_pct)),
            std::string::npos)
      << confidence_text(conf);
  EXPECT_EQ(confidence_to_json(conf).at("median_time_error_pct").get<double>(), h100.median_time_error_pct);
  const ModelSpec small = builtin_model("llama3-8b");
  const Cluster one = load_cluster("h200:1");
  const PlanRequest eager = load_plan("mb=1,gbs=1,seq=4096,recompute=full,framework=pytorch", small, one);
  const Confidence pytorch = estimate_confidence(small, one, eager.plan, eager.workload);
  EXPECT_EQ(pytorch.class_name, "dense-pytorch");
  EXPECT_TRUE(pytorch.too_few_sources());
  EXPECT_FALSE(pytorch.validated);
  EXPECT_NE(confidence_text(pytorch).find("too few to say out of sample"), std::string::npos) << confidence_text(pytorch);
}

TEST(AccuracyClasses, JsonRoundTrip) {
  const AccuracyTable& table = builtin_accuracy_table();
  const AccuracyTable back = accuracy_table_from_json(accuracy_table_to_json(table));
  ASSERT_EQ(back.classes.size(), table.classes.size());
  for (std::size_t i = 0; i < table.classes.size(); ++i) {
    EXPECT_EQ(back.classes[i].name, table.classes[i].name);
    EXPECT_EQ(back.classes[i].precisions, table.classes[i].precisions);
    EXPECT_EQ(back.classes[i].max_ep_nodes, table.classes[i].max_ep_nodes);
    EXPECT_EQ(back.classes[i].model_biases.size(), table.classes[i].model_biases.size());
    EXPECT_DOUBLE_EQ(back.classes[i].p90_error_pct, table.classes[i].p90_error_pct);
  }
  ASSERT_EQ(back.memory.size(), table.memory.size());
  EXPECT_THROW(accuracy_table_from_json(nlohmann::json{{"classes", {{{"class", "x"}}}}}), Error);
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
  EXPECT_NE(table.find("out of sample"), std::string::npos) << table;
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
  // Which way it errs: the more optimistic pool's class (the slowest pool paces the pipeline).
  EXPECT_EQ(c.median_time_error_pct, std::min(on_h100.median_time_error_pct, on_a100.median_time_error_pct));
  EXPECT_EQ(c.runs, std::min(on_h100.runs, on_a100.runs));
  EXPECT_EQ(c.extrapolations.size(), 1 + on_h100.extrapolations.size() + on_a100.extrapolations.size());
  EXPECT_NE(confidence_text(c).find("extrapolates: one pipeline across GPU types"), std::string::npos);
}

}  // namespace
}  // namespace tessera
