// Held-out check of `tessera calibrate` (issue 14's acceptance test): for each group of rows
// (a model of vtrain_runs.csv, a source of public_runs.csv), calibrate on a few rows drawn at
// random and predict the group's other rows, before (catalog) and after (calibrated).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibrate/calibration.h"
#include "evaluation/validation.h"

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
  std::int64_t work = 0;                    // prediction_work of the fit's and the held-out rows' pricing
};

struct HeldOutCalibration {
  std::vector<HeldOutDraw> draws;
  // Over every predicted row of every draw.
  double median_abs_error_before_pct = 0, median_abs_error_after_pct = 0;
  double mean_spearman_before = 0, mean_spearman_after = 0;  // over draws with >= 1 group
  std::int64_t work = 0;  // over every draw (HeldOutDraw::work)
};

struct HeldOutOptions {
  std::size_t rows_per_draw = 5;
  std::size_t draws = 20;
  std::uint64_t seed = 1;  // draw d of group g uses seed + d (the same rows for every group size)
  CalibrationOptions calibration;
  int threads = 0;  // draws run at once; 0 = hardware concurrency (the result is the same)
  // Most work the draws together may do (prediction_work of every run their fits and their
  // held-out rows price); 0 = no bound. Deterministic: a draw's work does not depend on timing,
  // so the check is refused exactly when the draws' sum is over it.
  std::int64_t work_budget = 0;
};

// 7 s on 2 cores at the slowest rate measured, 7.7 ns of one core per unit of prediction_work
// (6.2 to 7.7 ns over vtrain_runs.csv by model, public_runs.csv by source and by model,
// moe_runs.csv, h200/runs.csv), so a refused check (which runs until it is overdrawn) ends
// within 10 s.
inline constexpr std::int64_t kMaxHeldOutWork = 1'800'000'000;

// `group_of` names each row's group; groups with <= rows_per_draw rows are skipped. Throws
// Error(kHeldOutBudgetField, ...) when the draws need more than options.work_budget.
inline constexpr const char* kHeldOutBudgetField = "--draws";
HeldOutCalibration held_out_calibration(const std::vector<ValidationResult>& rows,
                                        const std::function<std::string(const ValidationResult&)>& group_of,
                                        const HeldOutOptions& options);

}  // namespace tessera
