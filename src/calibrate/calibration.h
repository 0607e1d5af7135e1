// `calibrate`: fits the parameters of calibration_parameter.h, one GPU type at a time, to the
// measurements of CalibrationData, and returns the calibrated GPU specs with a full account of
// the fit (what moved, by how much, how certain, and every measurement's error before and after).
//
// Time measurements (iteration times, collective times, GEMM throughputs) are fitted together by
// robust_fit (log space, soft-L1, bounds, a prior at the catalog value); a parameter the data
// cannot move, or only in a combination with one fitted before it, keeps its catalog value and
// is reported as not identified. Peak memory is fitted separately: memory_reserve_gib is the
// median of measured minus predicted peak (robust to one odd run), in GiB.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "calibrate/calibration_parameter.h"
#include "calibrate/measurement.h"
#include "calibrate/robust_fit.h"

namespace tessera {

enum class ParameterStatus {
  fitted,          // moved by the data, inside its bounds
  at_bound,        // the data pushed it to a physical bound (the model may miss a term)
  not_identified,  // the data is insensitive to it or it is confounded with a parameter fitted before it
  not_measured,    // no measurement of a kind that informs it (e.g. no peaks for memory_reserve_gib)
};
std::string_view parameter_status_name(ParameterStatus status);

struct ParameterFit {
  std::string gpu_key;
  std::string name;
  double catalog = 0;
  double fitted = 0;
  double lower = 0, upper = 0;
  // One standard deviation: relative (log units) for the log-space parameters, GiB for
  // memory_reserve_gib. 0 when not fitted.
  double uncertainty = 0;
  ParameterStatus status = ParameterStatus::not_identified;
};

struct MeasurementFit {
  std::string id;
  std::string kind;  // "iteration_time_s", "collective_time_s", "gemm_tflops", "peak_memory_gib"
  std::string gpu_key;
  double measured = 0;
  double before = 0;  // predicted with the catalog
  double after = 0;   // predicted with the fitted parameters
  double error_before_pct() const { return 100.0 * (before - measured) / measured; }
  double error_after_pct() const { return 100.0 * (after - measured) / measured; }
};

struct CalibrationProfile {
  std::vector<GpuSpec> gpus;  // the calibrated copy of every GPU type measured
  std::vector<ParameterFit> parameters;
  std::vector<MeasurementFit> measurements;
  double median_abs_error_before_pct = 0;  // over the time measurements
  double median_abs_error_after_pct = 0;
  // The fit's work: prediction_work of every run each residual evaluation priced.
  std::int64_t work = 0;
};

// How much the data must say before a parameter moves (forward_selection): a 10% change of the
// parameter must move the predictions by >= 0.5% RMS (min_sensitivity 0.05 in log units), a
// tenth of its effect must be its own (min_independence), and its fit must pay the BIC price.
// At most one parameter per two measurements is fitted: with more, the fit chases noise.
inline constexpr double kMinSensitivity = 0.05;
inline constexpr double kMinIndependence = 0.1;
inline constexpr double kMeasurementsPerParameter = 2.0;
// The prior around the catalog value: one standard deviation of 15% (log units), the spread of
// the catalog's fitted efficiencies between sources of one GPU type (leave-one-source-out refits
// of tessera validate move the GEMM scale by up to ~15%). Chosen with the held-out checks of
// README "Calibration" (0.405 and 0.15 tried; 0.15 was better on both files).
inline constexpr double kPriorSigma = 0.15;

struct CalibrationOptions {
  RobustFitOptions fit;
  double min_sensitivity = kMinSensitivity;
  double min_independence = kMinIndependence;
  double measurements_per_parameter = kMeasurementsPerParameter;
  double prior_sigma = kPriorSigma;
  // Only parameters of these terms may move (the online refit uses {compute, host}); empty = all.
  std::vector<ParameterTerm> terms;
  // When set, each residual evaluation takes its work (prediction_work of the runs it prices)
  // from this budget, which callers that repeat fits share; calibrate throws
  // Error(kCalibrationWorkField, ...) as soon as it is overdrawn.
  std::atomic<std::int64_t>* work_budget = nullptr;
};
inline constexpr const char* kCalibrationWorkField = "calibration work";

// Throws Error("calibrate", ...) on no measurements, a non-positive or non-finite measured value.
CalibrationProfile calibrate(const CalibrationData& data, const CalibrationOptions& options = {});

// The fit moved the parameter: fitted, or pushed to a bound.
bool parameter_moved(const ParameterFit& fit);

// "gpu.parameter" of every parameter the fit moved, in fit order.
std::vector<std::string> identified_parameters(const CalibrationProfile& profile);

// The GPU spec of `gpu` with the profile's parameters applied (unchanged when the profile has
// none for its key).
GpuSpec calibrated_gpu(const GpuSpec& gpu, const CalibrationProfile& profile);

}  // namespace tessera
