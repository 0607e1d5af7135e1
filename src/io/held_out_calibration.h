// Held-out check of `tessera calibrate` (issue 14's acceptance test): for each group of rows
// (a model of vtrain_runs.csv, a source of public_runs.csv), calibrate on a few rows drawn at
// random and predict the group's other rows, before (catalog) and after (calibrated).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibrate/calibration.h"
#include "io/validation.h"

namespace tessera {

struct HeldOutDraw {
  std::string group;
  std::uint64_t seed = 0;
  std::vector<std::string> fitted_on;       // row ids calibrated on
  std::size_t predicted = 0;                // rows predicted
  double median_abs_error_before_pct = 0;   // over the predicted rows
  double median_abs_error_after_pct = 0;
  // Mean Spearman rank correlation of predicted vs measured time over the predicted rows'
  // groups of equal (model, GPUs, global batch) with >= 3 rows; 0 groups -> 0.
  double mean_spearman_before = 0, mean_spearman_after = 0;
  std::size_t spearman_groups = 0;
  std::vector<ParameterFit> parameters;     // what the draw's calibration moved
};

struct HeldOutCalibration {
  std::vector<HeldOutDraw> draws;
  // Over every predicted row of every draw.
  double median_abs_error_before_pct = 0, median_abs_error_after_pct = 0;
  double mean_spearman_before = 0, mean_spearman_after = 0;  // over draws with >= 1 group
};

struct HeldOutOptions {
  std::size_t rows_per_draw = 5;
  std::size_t draws = 20;
  std::uint64_t seed = 1;  // draw d of group g uses seed + d (the same rows for every group size)
  CalibrationOptions calibration;
};

// `group_of` names each row's group; groups with <= rows_per_draw rows are skipped.
HeldOutCalibration held_out_calibration(const std::vector<ValidationResult>& rows,
                                        const std::function<std::string(const ValidationResult&)>& group_of,
                                        const HeldOutOptions& options);

}  // namespace tessera
