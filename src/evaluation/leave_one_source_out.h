// Leave-one-source-out check of the calibration: for each publisher of rows in a validation CSV,
// refit the GPU families' sustained GEMM efficiency on the other publishers' rows only, then
// predict the held-out rows with it. The in-sample figures of `tessera validate` use constants
// fitted on the same file; these say how the model does on a source it was not fitted to.
// The refit is median-unbiased: the scale at which the other rows are predicted too slow as often
// as too fast (the L1 location estimate of log(predicted / measured)). Each row's predicted time
// falls as the scale rises, so their median does too and the scale is unique; minimising the
// median |error| instead had several minima (14% apart on the Hopper rows without the Megatron-LM
// README's) and its answer depended on the search bracket.
#pragma once

#include <string>
#include <vector>

#include "evaluation/validation.h"
#include "formats/csv_table.h"

namespace tessera {

struct HeldOutRow {
  std::string source;
  std::string id;
  std::string accuracy_class;  // evaluation/validation.h accuracy_class
  double error_pct = 0;  // predicted vs measured, with the constants refitted without the source
  // The same in iteration time (negative: predicted faster than it ran), whatever the metric.
  double time_error_pct = 0;
  double gemm_scale = 1; // the refit: multiplier on the catalog's GEMM efficiencies of the row's GPU family
};

// One accuracy class's held-out errors: each row predicted without its own source's rows.
struct HeldOutClass {
  std::string name;
  std::size_t sources = 0;  // publishers among the class's rows
  std::size_t n = 0;
  double median_abs_error_pct = 0;
  double p90_abs_error_pct = 0;
  double max_abs_error_pct = 0;
  // The median of the rows' time_error_pct: negative when the class's runs took longer than
  // predicted (the model is optimistic for it).
  double median_time_error_pct = 0;
};

struct LeaveOneSourceOut {
  std::vector<HeldOutRow> rows;
  std::vector<std::string> sources;
  std::vector<HeldOutClass> classes;  // in evaluation/validation.h summarize_by_class's order
  double median_abs_error_pct = 0;
  double p90_abs_error_pct = 0;
  double max_abs_error_pct = 0;
};

// The publisher of a row: a GitHub repository (owner/name) or the whole URL otherwise.
std::string source_key(const std::string& url);

// A metric's error as an error in iteration time: throughput metrics (TFLOP/s, MFU, tokens/s)
// are inverse to time.
double time_error_pct(const std::string& metric, double error_pct);

// Several validation files as one table (Error "csv.columns" when their columns differ).
CsvTable concatenate_tables(const std::vector<CsvTable>& tables);

// The catalog with every GPU of GEMM `family` (catalog/gpu_catalog.h gemm_family) at `scale` x
// its 16-bit and FP8 GEMM efficiencies (capped at 1).
std::vector<GpuSpec> scaled_gemm_catalog(const std::string& family, double scale);

// The median over `rows` of log(predicted / measured iteration time) with `gpus` (0 for no rows).
double median_log_time_ratio(const CsvTable& rows, const std::vector<GpuSpec>& gpus);

// The multiplier on `family`'s GEMM efficiencies at which median_log_time_ratio of `rows` is 0,
// by bisection within [0.65, 1.35] (a bound when the root lies outside).
double median_unbiased_gemm_scale(const CsvTable& rows, const std::string& family);

LeaveOneSourceOut leave_one_source_out(const CsvTable& table);

}  // namespace tessera
