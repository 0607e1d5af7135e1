// Accuracy guard: `tessera validate` on the published runs of ../shared/validation, by class,
// against the figures documented in tests/fixtures/accuracy_figures.json (and the README's
// accuracy tables, in-sample and leave-one-source-out). A change that moves a class's median or
// p90 |error| by more than one point, or the vTrain rank correlation by more than 0.01, fails here
// until the documentation is updated with it. A second test shows the guard catches a calibration mutation.
#include "evaluation/validation.h"

#include <cmath>
#include <fstream>
#include <map>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "catalog/gpu_catalog.h"
#include "evaluation/leave_one_source_out.h"
#include "formats/json_fields.h"

namespace tessera {
namespace {

constexpr double kAllowedMovePoints = 1.0;
constexpr double kAllowedSpearmanMove = 0.01;

const std::string kShared = std::string(TESSERA_SOURCE_DIR) + "/data/validation/";

CsvTable table(const std::string& file) {
  return parse_csv(json_fields::read_text_file(kShared + file, "file"), file);
}

nlohmann::json documented() {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/tests/fixtures/accuracy_figures.json");
  return nlohmann::json::parse(in);
}

std::map<std::string, ClassSummary> classes(const ValidationReport& report) {
  std::map<std::string, ClassSummary> out;
  for (const ClassSummary& k : summarize_by_class(report)) out[k.name] = k;
  return out;
}

// Classes whose median or p90 differ from the documented figures by more than a point.
int moved_classes(const std::map<std::string, ClassSummary>& got, const nlohmann::json& want, bool report) {
  int moved = 0;
  for (const auto& [name, figures] : want.items()) {
    const auto it = got.find(name);
    if (it == got.end()) {
      if (report) ADD_FAILURE() << "class " << name << " has no rows";
      ++moved;
      continue;
    }
    const double median = figures.at("median").get<double>(), p90 = figures.at("p90").get<double>();
    const bool off = std::fabs(it->second.median_abs_error_pct - median) > kAllowedMovePoints ||
                     std::fabs(it->second.p90_abs_error_pct - p90) > kAllowedMovePoints ||
                     it->second.n != figures.at("n").get<std::size_t>();
    if (off && report)
      ADD_FAILURE() << name << ": median " << it->second.median_abs_error_pct << " (documented " << median
                    << "), p90 " << it->second.p90_abs_error_pct << " (documented " << p90 << "), n "
                    << it->second.n;
    moved += off ? 1 : 0;
  }
  return moved;
}

TEST(ValidationAccuracy, PublicRunsByClassMatchTheDocumentedFigures) {
  const ValidationReport report = validate_runs(table("public_runs.csv"));
  EXPECT_TRUE(report.skipped.empty());
  EXPECT_EQ(moved_classes(classes(report), documented().at("public_runs"), true), 0);
  // Every published run ran: each must be predicted to fit.
  for (const auto& row : report.rows) EXPECT_TRUE(row.fits) << row.id;
}

// The MoE file (Qwen3-235B-A22B on 256 H100, every knob published) and the H200 plain-PyTorch
// step times, by class, likewise; every run of both fits.
TEST(ValidationAccuracy, MoeAndH200RunsMatchTheDocumentedFigures) {
  for (const auto& [file, key] : {std::pair{"moe_runs.csv", "moe_runs"}, std::pair{"h200/runs.csv", "h200_runs"}}) {
    const ValidationReport report = validate_runs(table(file));
    EXPECT_TRUE(report.skipped.empty()) << file;
    EXPECT_EQ(moved_classes(classes(report), documented().at(key), true), 0) << file;
    for (const auto& row : report.rows) EXPECT_TRUE(row.fits) << row.id;
  }
}

// The README's out-of-sample table (public_runs.csv alone): each class with two or more publishers,
// every row predicted with the GEMM efficiency refitted without its own publisher.
TEST(ValidationAccuracy, HeldOutPublicRunsMatchTheDocumentedFigures) {
  const LeaveOneSourceOut held_out = leave_one_source_out(table("public_runs.csv"));
  const nlohmann::json want = documented().at("public_runs_held_out");
  std::size_t documented_classes = 0;
  for (const HeldOutClass& k : held_out.classes) {
    if (k.sources < 2) continue;
    ++documented_classes;
    ASSERT_TRUE(want.contains(k.name)) << k.name;
    const nlohmann::json& figures = want.at(k.name);
    EXPECT_EQ(k.n, figures.at("n").get<std::size_t>()) << k.name;
    EXPECT_EQ(k.sources, figures.at("sources").get<std::size_t>()) << k.name;
    EXPECT_NEAR(k.median_abs_error_pct, figures.at("median").get<double>(), kAllowedMovePoints) << k.name;
    EXPECT_NEAR(k.p90_abs_error_pct, figures.at("p90").get<double>(), kAllowedMovePoints) << k.name;
  }
  EXPECT_EQ(documented_classes, want.size());
}

TEST(ValidationAccuracy, VtrainRankingMatchesTheDocumentedFigures) {
  const ValidationReport report = validate_runs(table("vtrain_runs.csv"));
  const nlohmann::json want = documented().at("vtrain_runs");
  EXPECT_NEAR(report.summary.mean_group_spearman, want.at("mean_group_spearman").get<double>(), kAllowedSpearmanMove);
  EXPECT_GE(report.summary.mean_group_spearman, 0.9);  // issue 11's floor
  EXPECT_NEAR(report.summary.median_abs_error_pct, want.at("median").get<double>(), kAllowedMovePoints);
  EXPECT_NEAR(report.summary.p90_abs_error_pct, want.at("p90").get<double>(), kAllowedMovePoints);
  for (const auto& row : report.rows) EXPECT_TRUE(row.fits) << row.id;
}

TEST(ValidationAccuracy, GuardCatchesAGemmEfficiencyMutation) {
  // Issue 11's mutation: the GEMM efficiencies of A100 and H100 from 0.74 / 0.72 to 0.58.
  std::vector<GpuSpec> mutated = gpu_catalog();
  for (GpuSpec& g : mutated)
    if (g.key == "a100-sxm-80gb" || g.key == "a100-class" || g.key == "h100-sxm-80gb") g.gemm_efficiency = 0.58;
  const ValidationReport report = validate_runs(table("public_runs.csv"), PipelineModel::simulated, &mutated);
  EXPECT_GE(moved_classes(classes(report), documented().at("public_runs"), false), 2);
}

}  // namespace
}  // namespace tessera
