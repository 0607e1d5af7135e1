#include "calibrate/calibration.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.h"
#include "core/percentile.h"
#include "core/work_budget.h"

namespace tessera {

namespace {

constexpr std::string_view kIterationKind = "iteration_time_s";
constexpr std::string_view kCollectiveKind = "collective_time_s";
constexpr std::string_view kGemmKind = "gemm_tflops";
constexpr std::string_view kMemoryKind = "peak_memory_gib";

// The measurements of one GPU type.
struct GpuMeasurements {
  GpuSpec catalog;
  std::vector<const RunMeasurement*> runs;
  std::vector<const CollectiveMeasurement*> collectives;
  std::vector<const GemmMeasurement*> gemms;
  std::size_t time_count() const { return runs.size() + collectives.size() + gemms.size(); }
};

void require_measured(const std::string& id, double value) {
  if (!std::isfinite(value) || value <= 0)
    throw Error("calibrate." + id, "measured value " + std::to_string(value), "a finite number > 0");
}

std::map<std::string, GpuMeasurements> group_by_gpu(const CalibrationData& data) {
  std::map<std::string, GpuMeasurements> out;
  auto slot = [&](const GpuSpec& gpu) -> GpuMeasurements& {
    auto [it, fresh] = out.try_emplace(gpu.key);
    if (fresh) it->second.catalog = gpu;
    return it->second;
  };
  for (const auto& r : data.runs) {
    require_measured(r.id, r.iteration_time_s);
    if (r.peak_memory_gib) require_measured(r.id + ".peak_memory_gib", *r.peak_memory_gib);
    slot(r.gpu).runs.push_back(&r);
  }
  for (const auto& c : data.collectives) {
    require_measured(c.id, c.time_s);
    slot(c.gpu).collectives.push_back(&c);
  }
  for (const auto& g : data.gemms) {
    require_measured(g.id, g.tflops);
    slot(g.gpu).gemms.push_back(&g);
  }
  return out;
}

bool term_allowed(ParameterTerm term, const CalibrationOptions& options) {
  return options.terms.empty() || std::find(options.terms.begin(), options.terms.end(), term) != options.terms.end();
}

// The log-space parameters of one GPU type that may move, in priority order.
std::vector<const CalibrationParameter*> time_parameters(const GpuSpec& gpu, const CalibrationOptions& options) {
  std::vector<const CalibrationParameter*> out;
  for (const auto& p : calibration_parameters())
    if (p.term != ParameterTerm::memory && term_allowed(p.term, options) && gpu.*p.field > 0) out.push_back(&p);
  return out;
}

GpuSpec with_values(const GpuSpec& gpu, const std::vector<const CalibrationParameter*>& params,
                    std::span<const double> log_values) {
  GpuSpec out = gpu;
  for (std::size_t j = 0; j < params.size(); ++j) out.*(params[j]->field) = std::exp(log_values[j]);
  return out;
}

// log(predicted / measured) of every time measurement, runs first, then collectives, then GEMMs.
void time_residuals(const GpuMeasurements& g, const GpuSpec& gpu, std::span<double> r) {
  std::size_t i = 0;
  for (const auto* run : g.runs) r[i++] = std::log(predict_iteration_time_s(*run, gpu) / run->iteration_time_s);
  for (const auto* c : g.collectives) r[i++] = std::log(predict_collective_time_s(*c, gpu) / c->time_s);
  for (const auto* m : g.gemms) r[i++] = std::log(predict_gemm_tflops(*m, gpu) / m->tflops);
}

std::vector<MeasurementFit> time_fits(const GpuMeasurements& g, const GpuSpec& after) {
  std::vector<MeasurementFit> out;
  const std::string& key = g.catalog.key;
  for (const auto* run : g.runs)
    out.push_back({run->id, std::string(kIterationKind), key, run->iteration_time_s,
                   predict_iteration_time_s(*run, g.catalog), predict_iteration_time_s(*run, after)});
  for (const auto* c : g.collectives)
    out.push_back({c->id, std::string(kCollectiveKind), key, c->time_s, predict_collective_time_s(*c, g.catalog),
                   predict_collective_time_s(*c, after)});
  for (const auto* m : g.gemms)
    out.push_back({m->id, std::string(kGemmKind), key, m->tflops, predict_gemm_tflops(*m, g.catalog),
                   predict_gemm_tflops(*m, after)});
  return out;
}

// A parameter's fit record at its catalog value (not yet fitted).
ParameterFit parameter_fit(const GpuSpec& catalog, const CalibrationParameter& p) {
  ParameterFit fit;
  fit.gpu_key = catalog.key;
  fit.name = std::string(p.name);
  fit.catalog = fit.fitted = catalog.*p.field;
  fit.lower = p.lower;
  fit.upper = p.upper;
  return fit;
}

std::size_t max_free_parameters(std::size_t measurements, const CalibrationOptions& options) {
  const auto by_count = static_cast<std::size_t>(static_cast<double>(measurements) / options.measurements_per_parameter);
  return measurements == 0 ? 0 : std::max<std::size_t>(1, by_count);
}

// Fits the time parameters of one GPU type; appends their ParameterFits and returns the GPU.
// Each residual evaluation prices every run: its work is taken from the caller's budget, if any.
GpuSpec fit_time_parameters(const GpuMeasurements& g, const CalibrationOptions& options,
                            std::vector<ParameterFit>& fits, std::int64_t& work) {
  const auto params = time_parameters(g.catalog, options);
  std::vector<FitVariable> vars;
  for (const auto* p : params) {
    const double start = std::log(g.catalog.*(p->field));
    vars.push_back({start, std::min(start, std::log(p->lower)), std::max(start, std::log(p->upper)),
                    options.prior_sigma});
  }
  const std::size_t m = g.time_count();
  std::int64_t evaluation_work = 0;  // of pricing every run once
  for (const auto* run : g.runs) evaluation_work += prediction_work(*run);
  const ResidualFunction f = [&](std::span<const double> x, std::span<double> r) {
    take_work(options.work_budget, evaluation_work, kCalibrationWorkField);
    work += evaluation_work;
    time_residuals(g, with_values(g.catalog, params, x), r);
  };
  const IdentifiabilityRule rule{options.min_sensitivity, options.min_independence, max_free_parameters(m, options)};
  const auto [free, result] = forward_selection(vars, m, f, rule, options.fit);
  for (std::size_t j = 0; j < params.size(); ++j) {
    ParameterFit fit = parameter_fit(g.catalog, *params[j]);
    if (free[j]) fit.fitted = std::exp(result.x[j]);
    fit.uncertainty = free[j] ? result.sigma[j] : 0.0;
    fit.status = !free[j] ? ParameterStatus::not_identified
                          : (result.at_bound[j] ? ParameterStatus::at_bound : ParameterStatus::fitted);
    fits.push_back(fit);
  }
  GpuSpec out = g.catalog;  // parameters that stayed put keep their catalog value exactly
  for (std::size_t j = 0; j < params.size(); ++j)
    if (free[j]) out.*(params[j]->field) = std::exp(result.x[j]);
  return out;
}

// memory_reserve_gib: the median of measured minus predicted peak, within its bounds; its
// uncertainty is the scaled median absolute deviation (1.4826 MAD, a normal's sigma) / sqrt(n).
void fit_memory_reserve(const GpuMeasurements& g, const CalibrationOptions& options, GpuSpec& gpu,
                        std::vector<ParameterFit>& fits, std::vector<MeasurementFit>& rows) {
  const CalibrationParameter& p = *find_calibration_parameter("memory_reserve_gib");
  ParameterFit fit = parameter_fit(g.catalog, p);
  fit.status = ParameterStatus::not_measured;
  std::vector<double> gaps, before;
  std::vector<const RunMeasurement*> with_peaks;
  for (const auto* run : g.runs)
    if (run->peak_memory_gib) {
      with_peaks.push_back(run);
      before.push_back(predict_peak_memory_gib(*run, g.catalog));
      gaps.push_back(*run->peak_memory_gib - predict_peak_memory_gib(*run, gpu));
    }
  if (!with_peaks.empty() && term_allowed(ParameterTerm::memory, options)) {
    const double shift = median(gaps);
    const double wanted = gpu.*p.field + shift;
    fit.upper = std::min(p.upper, gpu.hbm_gib);  // no reserve beyond the GPU's memory
    fit.fitted = std::clamp(wanted, p.lower, fit.upper);  // the physical range, reported as at_bound
    fit.status = fit.fitted == wanted ? ParameterStatus::fitted : ParameterStatus::at_bound;
    std::vector<double> deviations;
    for (double d : gaps) deviations.push_back(std::abs(d - shift));
    constexpr double kMadToSigma = 1.4826;
    fit.uncertainty = kMadToSigma * median(deviations) / std::sqrt(static_cast<double>(gaps.size()));
    gpu.*p.field = fit.fitted;
  }
  fits.push_back(fit);
  for (std::size_t i = 0; i < with_peaks.size(); ++i)
    rows.push_back({with_peaks[i]->id, std::string(kMemoryKind), g.catalog.key, *with_peaks[i]->peak_memory_gib,
                    before[i], predict_peak_memory_gib(*with_peaks[i], gpu)});
}

}  // namespace

std::string_view parameter_status_name(ParameterStatus status) {
  switch (status) {
    case ParameterStatus::fitted: return "fitted";
    case ParameterStatus::at_bound: return "at_bound";
    case ParameterStatus::not_identified: return "not_identified";
    case ParameterStatus::not_measured: return "not_measured";
  }
  return "not_identified";
}

CalibrationProfile calibrate(const CalibrationData& data, const CalibrationOptions& options) {
  if (data.empty())
    throw Error("calibrate", "no measurements", "at least one run, collective benchmark row or GEMM");
  check_physical(data);
  CalibrationProfile profile;
  std::vector<double> abs_before, abs_after;
  for (const auto& [key, g] : group_by_gpu(data)) {
    GpuSpec gpu = fit_time_parameters(g, options, profile.parameters, profile.work);
    for (MeasurementFit& row : time_fits(g, gpu)) {
      abs_before.push_back(std::abs(row.error_before_pct()));
      abs_after.push_back(std::abs(row.error_after_pct()));
      profile.measurements.push_back(std::move(row));
    }
    fit_memory_reserve(g, options, gpu, profile.parameters, profile.measurements);
    gpu.validate();
    profile.gpus.push_back(std::move(gpu));
  }
  profile.median_abs_error_before_pct = median(abs_before);
  profile.median_abs_error_after_pct = median(abs_after);
  return profile;
}

GpuSpec calibrated_gpu(const GpuSpec& gpu, const CalibrationProfile& profile) {
  for (const GpuSpec& g : profile.gpus)
    if (g.key == gpu.key) return g;
  return gpu;
}

}  // namespace tessera
