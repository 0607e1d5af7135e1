// The leave-one-source-out refit (evaluation/leave_one_source_out.h): the GEMM scale fitted on
// the other publishers' rows is median-unbiased on them, unique, and what the held-out rows are
// predicted with.
#include "evaluation/leave_one_source_out.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "catalog/gpu_catalog.h"
#include "formats/csv_table.h"
#include "formats/json_fields.h"

namespace tessera {
namespace {

CsvTable shipped(const std::string& name) {
  const std::string path = std::string(TESSERA_SOURCE_DIR) + "/data/validation/" + name;
  return parse_csv(json_fields::read_text_file(path, "file"), path);
}

// The rows of `table` whose source column contains `publisher`, or (keep = false) the others.
CsvTable rows_of(const CsvTable& table, const std::string& publisher, bool keep) {
  const auto source = static_cast<std::size_t>(table.column("source"));
  CsvTable out;
  out.header = table.header;
  for (const auto& row : table.rows)
    if ((row[source].find(publisher) != std::string::npos) == keep) out.rows.push_back(row);
  return out;
}

// The Hopper rows that predict the Megatron-LM README's when it is held out: torchtitan's,
// Megatron-Bridge's and DGX Cloud's (dense, FP8 and MoE on H100).
CsvTable hopper_rows_without_the_megatron_readme() {
  const CsvTable all = shipped("public_runs.csv");
  const auto gpu = static_cast<std::size_t>(all.column("gpu"));
  CsvTable out = rows_of(all, "NVIDIA/Megatron-LM", false);
  std::erase_if(out.rows, [&](const auto& row) { return gemm_family(row[gpu]) != "hopper"; });
  return out;
}

TEST(LeaveOneSourceOut, TheRefitPredictsTheTrainingRowsTooSlowAsOftenAsTooFast) {
  const CsvTable training = hopper_rows_without_the_megatron_readme();
  ASSERT_GE(training.rows.size(), 10u);
  const double scale = median_unbiased_gemm_scale(training, "hopper");
  EXPECT_NEAR(median_log_time_ratio(training, scaled_gemm_catalog("hopper", scale)), 0.0, 1e-4) << scale;
}

// The median of log(predicted / measured) falls as the GEMMs get faster, so its root is unique:
// 2% either side it has the sign that points back to it.
TEST(LeaveOneSourceOut, TheRefitIsTheOneRootOfAFallingMedian) {
  const CsvTable training = hopper_rows_without_the_megatron_readme();
  const double scale = median_unbiased_gemm_scale(training, "hopper");
  double previous = median_log_time_ratio(training, scaled_gemm_catalog("hopper", 0.8));
  for (double s = 0.85; s <= 1.2; s += 0.05) {
    const double now = median_log_time_ratio(training, scaled_gemm_catalog("hopper", s));
    EXPECT_LE(now, previous) << s;
    previous = now;
  }
  EXPECT_GT(median_log_time_ratio(training, scaled_gemm_catalog("hopper", scale * 0.98)), 0.0);
  EXPECT_LT(median_log_time_ratio(training, scaled_gemm_catalog("hopper", scale * 1.02)), 0.0);
}

// Only the family's GPUs move, and no efficiency passes 1.
TEST(LeaveOneSourceOut, TheScaledCatalogMovesOneFamilyAndCapsAtOne) {
  const GpuSpec& h100 = find_gpu("h100-sxm-80gb");
  const GpuSpec& a100 = find_gpu("a100-sxm-80gb");
  const std::vector<GpuSpec> gpus = scaled_gemm_catalog("hopper", 1.1);
  for (const GpuSpec& g : gpus) {
    if (g.key == h100.key) {
      EXPECT_DOUBLE_EQ(g.gemm_efficiency, std::min(1.0, 1.1 * h100.gemm_efficiency));
    }
    if (g.key == a100.key) {
      EXPECT_DOUBLE_EQ(g.gemm_efficiency, a100.gemm_efficiency);
    }
  }
  for (const GpuSpec& g : scaled_gemm_catalog("hopper", 3.0)) {
    if (gemm_family(g.key) == "hopper") {
      EXPECT_LE(g.gemm_efficiency, 1.0);
    }
  }
}

// Every held-out row is predicted with the scale refitted on the rows of its family from the
// other sources, and reports it.
TEST(LeaveOneSourceOut, HeldOutRowsCarryTheRefitOfTheOtherSources) {
  const CsvTable all = shipped("public_runs.csv");
  const LeaveOneSourceOut result = leave_one_source_out(all);
  const double readme_scale = median_unbiased_gemm_scale(hopper_rows_without_the_megatron_readme(), "hopper");
  std::size_t readme_rows = 0;
  for (const HeldOutRow& r : result.rows)
    if (r.source == "https://github.com/NVIDIA/Megatron-LM") {
      EXPECT_DOUBLE_EQ(r.gemm_scale, readme_scale) << r.id;
      ++readme_rows;
    }
  EXPECT_EQ(readme_rows, rows_of(all, "NVIDIA/Megatron-LM", true).rows.size());
}

}  // namespace
}  // namespace tessera
