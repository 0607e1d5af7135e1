// Plain PyTorch on one H200, measured for this project (data/validation/h200/: runs.csv and
// memory.csv, shipped from ../shared/validation/h200/; examples/h200/out_of_memory_run.csv is the
// configuration of the run that ran out of memory). Without calibration: step times within the
// issue's bounds (median <= 5%, max <= 10%), every measured peak within 2% (the issue asks 8%),
// every verdict right; and the memory file's rules.
#include "evaluation/memory_check.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "common/thrown_field.h"
#include "core/error.h"
#include "evaluation/validation.h"
#include "formats/csv_table.h"

namespace tessera {
namespace {

using testing::thrown_field;

const std::string kRoot = std::string(TESSERA_SOURCE_DIR);

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

CsvTable h200_table(const std::string& path) { return parse_csv(read(path), path); }

const ValidationReport& report() {
  static const ValidationReport r =
      validate_files({h200_table(kRoot + "/data/validation/h200/runs.csv"), h200_table(kRoot + "/examples/h200/out_of_memory_run.csv")});
  return r;
}

TEST(H200Pytorch, StepTimesWithinTheBoundsWithoutCalibration) {
  const ValidationReport& r = report();
  ASSERT_EQ(r.rows.size(), 9u);
  EXPECT_TRUE(r.skipped.empty());
  ASSERT_EQ(r.configurations.size(), 1u);
  for (const auto& row : r.rows) EXPECT_EQ(row.plan_value.framework, TrainingFramework::pytorch) << row.id;
  EXPECT_LE(r.summary.median_abs_error_pct, 5.0);
  EXPECT_LE(r.summary.max_abs_error_pct, 10.0);
  // The ranking within each model is exact.
  EXPECT_DOUBLE_EQ(r.summary.mean_model_gpus_spearman, 1.0);
}

TEST(H200Pytorch, EveryPeakWithinTwoPercentAndEveryVerdictRight) {
  const MemoryCheck m = check_memory(read_measured_peaks(h200_table(kRoot + "/data/validation/h200/memory.csv")), report());
  ASSERT_EQ(m.rows.size(), 10u);
  EXPECT_EQ(m.measured, 9u);
  for (const MemoryCheckRow& row : m.rows) {
    EXPECT_TRUE(row.verdict_right()) << row.id << ": predicted " << row.predicted_total_gib << " of " << row.usable_gib;
    if (row.measured_gib > 0) {
      EXPECT_LE(std::fabs(row.error_pct), 2.0) << row.id;
    }
    // The models Tessera built have the measured runs' parameter counts (tied embeddings read).
    EXPECT_LE(std::fabs(row.params_error_pct), 0.01) << row.id;
  }
  EXPECT_EQ(m.fits_ran, 9u);
  EXPECT_EQ(m.no_fit_oom, 1u);
  EXPECT_EQ(m.fits_oom + m.no_fit_ran, 0u);
}

std::string peaks_field(const std::string& text) {
  return thrown_field([&] { (void)check_memory(read_measured_peaks(parse_csv(text, "peaks")), report()); });
}

TEST(H200Pytorch, BadPeakFilesNameTheField) {
  const std::string head = "id,ran,peak_allocated_gib,peak_reserved_gib,params\n";
  EXPECT_EQ(peaks_field(head + "no-such-run,yes,1,,\n"), "memory.id");
  EXPECT_EQ(peaks_field(head + "h200-llama3.1-8b-s2048-mb1-ga1-none,yes,-3,,\n"), "memory.peak_allocated_gib");
  EXPECT_EQ(peaks_field(head + "h200-llama3.1-8b-s2048-mb1-ga1-none,maybe,3,,\n"), "memory.ran");
  EXPECT_EQ(peaks_field(head + "h200-llama3.1-8b-s2048-mb1-ga1-none,yes,,,\n"), "memory.peak_allocated_gib");
  EXPECT_EQ(peaks_field(head + "h200-llama3.1-8b-s2048-mb1-ga1-none,yes,3,,\nh200-llama3.1-8b-s2048-mb1-ga1-none,yes,3,,\n"),
            "memory.id");
  EXPECT_EQ(peaks_field("id,peak_allocated_gib\nx,1\n"), "memory.ran");
  EXPECT_EQ(peaks_field(head + "h200-llama3.1-8b-s2048-mb1-ga1-none,yes,3,-1,\n"), "memory.peak_reserved_gib");
}

}  // namespace
}  // namespace tessera
