// Leave-one-source-out check of the calibration: for each publisher of rows in a validation CSV,
// refit the GPU families' sustained GEMM efficiency on the other publishers' rows only, then
// predict the held-out rows with it. The in-sample figures of `tessera validate` use constants
// fitted on the same file; these say how the model does on a source it was not fitted to.
#pragma once

#include <string>
#include <vector>

#include "io/csv_table.h"
#include "io/validation.h"

namespace tessera {

struct HeldOutRow {
  std::string source;
  std::string id;
  double error_pct = 0;  // predicted vs measured, with the constants refitted without the source
  double gemm_scale = 1; // the refit: multiplier on the catalog's GEMM efficiencies of the row's GPU family
};

struct LeaveOneSourceOut {
  std::vector<HeldOutRow> rows;
  std::vector<std::string> sources;
  double median_abs_error_pct = 0;
  double p90_abs_error_pct = 0;
  double max_abs_error_pct = 0;
};

// The publisher of a row: a GitHub repository (owner/name) or the whole URL otherwise.
std::string source_key(const std::string& url);

LeaveOneSourceOut leave_one_source_out(const CsvTable& table);

}  // namespace tessera
