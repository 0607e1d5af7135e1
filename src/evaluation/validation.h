// Predicts the measured metric of each published run in a validation CSV
// (../shared/validation/README.md schema) and compares. Unknown knobs (empty cells for
// micro-batch, recompute, sequence parallel, sharding, vpp) are filled with the value Tessera
// itself finds fastest among valid values that fit, and reported as assumed.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/percentile.h"  // percentile(), used with the summaries
#include "cost/cost_model.h"
#include "cost/estimate.h"
#include "formats/csv_table.h"
#include "hardware/cluster.h"
#include "hardware/gpu_spec.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

struct ValidationResult {
  std::string id;
  std::string source;  // the row's source URL
  std::string model_name;
  std::int64_t n_gpus = 0;
  std::int64_t global_batch = 0;
  std::string metric;
  double measured = 0;        // in the metric's own unit
  double predicted = 0;       // in the metric's own unit
  double error_pct = 0;       // 100 (predicted - measured) / measured
  double measured_time_s = 0; // the metric converted to an iteration time
  double predicted_time_s = 0;
  bool fits = true;
  std::map<std::string, std::string> assumed;  // filled empty cells and modelling assumptions
  std::string plan;    // the plan predicted, as --plan shorthand
  Estimate estimate;   // its full prediction
  // The row as Tessera values (for the planner comparison).
  ModelSpec model;
  Cluster cluster;
  double network_gbps_per_gpu = 0;  // the row's inter_node_gbps (0 = the catalog's)
  Workload workload;
  Plan plan_value;
};

struct ValidationSkip {
  std::string id;
  std::string reason;  // the whole error line: "csv.gpus_per_node: got 0 (allowed: ...)"
  std::string field, problem, allowed;  // its parts, for a caller that re-raises it
};

struct ValidationSummary {
  std::size_t n = 0;
  double median_abs_error_pct = 0;
  double p90_abs_error_pct = 0;
  double max_abs_error_pct = 0;
  // Mean over groups of equal (model, n_gpus, global_batch) with >= 3 rows of the Spearman rank
  // correlation between predicted and measured iteration time.
  double mean_group_spearman = 0;
  std::size_t spearman_groups = 0;
  // The same over groups of equal (model, n_gpus) only (plans that also differ in batch size).
  double mean_model_gpus_spearman = 0;
  std::size_t model_gpus_groups = 0;
};

struct ValidationReport {
  std::vector<ValidationResult> rows;
  std::vector<ValidationSkip> skipped;
  // Rows with no measured metric (configurations only: a run that ran out of memory), estimated
  // for the memory check and not in the summary.
  std::vector<ValidationResult> configurations;
  ValidationSummary summary;
};

// `pipeline`: the pipeline term of every prediction (the simulator, or the closed form).
// `gpu_overrides`: GPU specs used instead of the catalog's entry of the same key (fitting and
// leave-one-source-out checks vary calibration constants); nullptr = the catalog.
ValidationReport validate_runs(const CsvTable& table, PipelineModel pipeline = PipelineModel::simulated,
                               const std::vector<GpuSpec>* gpu_overrides = nullptr);

// Several files as one report (ids unique across them: Error "csv.id"); the summary over all rows.
ValidationReport validate_files(const std::vector<CsvTable>& tables, PipelineModel pipeline = PipelineModel::simulated);
// Fills report.summary from report.rows.
void summarize_report(ValidationReport& report);

// GPU family whose GEMM efficiency is one fitted constant: "ampere" (a100*), "hopper" (h100*,
// h800, h200), or "" (another part). Accuracy classes and the leave-one-source-out refit use it.
std::string gemm_family(const std::string& gpu_key);

// The row classes accuracy is reported and guarded by: "moe" (any MoE row), "dense-pytorch" (a
// plain PyTorch loop: eager kernels, its own memory), "dense-fp8", "dense-a100" (Ampere,
// 16-bit), "dense-h100" (Hopper, 16-bit), or "dense-other". kAccuracyClassOrder lists them in
// the order reports use.
inline constexpr const char* kAccuracyClassOrder[] = {"dense-a100", "dense-h100", "dense-fp8", "dense-pytorch",
                                                      "moe", "dense-other"};
std::string accuracy_class(const ValidationResult& row);
struct ClassSummary {
  std::string name;
  std::size_t n = 0;
  double median_abs_error_pct = 0;
  double p90_abs_error_pct = 0;
  double max_abs_error_pct = 0;
};
// Median, p90 and max of absolute errors (percent); all zero for none.
ClassSummary abs_error_summary(std::string name, const std::vector<double>& abs_errors);
// One summary per class present, in the order above.
std::vector<ClassSummary> summarize_by_class(const ValidationReport& report);

// Spearman rank correlation (average ranks for ties). Returns 0 for fewer than 2 points or
// a constant series.
double spearman(const std::vector<double>& a, const std::vector<double>& b);

}  // namespace tessera
