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
constexpr std::string_view kAttentionKind = "attention_time_s";
constexpr std::string_view kKernelKind = "kernel_time_s";
constexpr std::string_view kMemoryKind = "peak_memory_gib";

// The measurements of one GPU type.
struct GpuMeasurements {
  GpuSpec catalog;
  std::vector<const RunMeasurement*> runs;
  std::vector<const CollectiveMeasurement*> collectives;
  std::vector<const GemmMeasurement*> gemms;
  std::vector<const AttentionMeasurement*> attention;
  std::vector<const KernelMeasurement*> kernels;
  std::size_t time_count() const {
    return runs.size() + collectives.size() + gemms.size() + attention.size() + kernels.size();
  }
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
  for (const auto& a : data.attention) {
    require_measured(a.id, a.time_s);
    slot(a.gpu).attention.push_back(&a);
  }
  for (const auto& k : data.kernels) {
    require_measured(k.id, k.time_s);
    slot(k.gpu).kernels.push_back(&k);
  }
  return out;
}

bool term_allowed(ParameterTerm term, const CalibrationOptions& options) {
  return options.terms.empty() || std::find(options.terms.begin(), options.terms.end(), term) != options.terms.end();
}

// The stages of a fit (README "What is fitted"): each kind of component measurement moves the
// parameters it measures directly -- GEMMs the GEMM terms, attention calls the attention rate,
// host dispatch rows the host's time per operator, memory-bound kernels the HBM rate and the
// per-kernel cost, collectives the links -- so each keeps its meaning; training runs come last and
// move only what no component measured. Each stage starts from what the ones before it fitted.
enum class StageKind { gemms, attention, host_dispatch, kernels, collectives, runs };
struct FitStage {
  StageKind kind;
  std::vector<std::string_view> parameters;  // empty: every parameter
};
const std::vector<FitStage>& fit_stages() {
  static const std::vector<FitStage> stages = {
      {StageKind::gemms, {"gemm_efficiency", "gemm_half_dim", "fp8_gemm_efficiency"}},
      {StageKind::attention, {"attention_efficiency"}},
      {StageKind::host_dispatch, {"host_op_dispatch_s"}},
      {StageKind::kernels, {"host_op_dispatch_s", "host_overlap_exponent", "kernel_overhead_s", "hbm_efficiency"}},
      {StageKind::collectives,
       {"nvlink_efficiency", "nvlink_latency_s", "network_efficiency", "network_latency_s", "all_to_all_efficiency"}},
      {StageKind::runs, {}},
  };
  return stages;
}

// The measurements of one GPU type that a stage fits to.
GpuMeasurements stage_measurements(const GpuMeasurements& g, StageKind kind) {
  GpuMeasurements out;
  out.catalog = g.catalog;
  switch (kind) {
    case StageKind::gemms:
      // Dense GEMMs only: no parameter describes the grouped kernel alone, and its rows (few rows
      // per expert) would bend the dense curve; grouped rows are predicted and reported.
      for (const auto* m : g.gemms)
        if (m->groups <= 1) out.gemms.push_back(m);
      break;
    case StageKind::attention: out.attention = g.attention; break;
    case StageKind::host_dispatch:
      for (const auto* k : g.kernels)
        if (k->host_only) out.kernels.push_back(k);
      break;
    case StageKind::kernels: out.kernels = g.kernels; break;
    case StageKind::collectives: out.collectives = g.collectives; break;
    case StageKind::runs: out.runs = g.runs; break;
  }
  return out;
}

// The log-space parameters a stage may move, in priority order: of the stage, of an allowed
// term, not fitted by an earlier stage, and used by this GPU.
std::vector<const CalibrationParameter*> stage_parameters(const FitStage& stage, const GpuSpec& gpu,
                                                          const std::vector<ParameterFit>& fitted,
                                                          const CalibrationOptions& options) {
  const auto in_stage = [&](std::string_view name) {
    return stage.parameters.empty() ||
           std::find(stage.parameters.begin(), stage.parameters.end(), name) != stage.parameters.end();
  };
  const auto already = [&](std::string_view name) {
    return std::any_of(fitted.begin(), fitted.end(), [&](const ParameterFit& f) { return f.name == name; });
  };
  std::vector<const CalibrationParameter*> out;
  for (const auto& p : calibration_parameters())
    if (p.term != ParameterTerm::memory && term_allowed(p.term, options) && gpu.*p.field > 0 && in_stage(p.name) &&
        !already(p.name))
      out.push_back(&p);
  return out;
}

GpuSpec with_values(const GpuSpec& gpu, const std::vector<const CalibrationParameter*>& params,
                    std::span<const double> log_values) {
  GpuSpec out = gpu;
  for (std::size_t j = 0; j < params.size(); ++j) out.*(params[j]->field) = std::exp(log_values[j]);
  return out;
}

// log(predicted / measured) of every time measurement, runs first, then collectives, GEMMs,
// attention calls and memory-bound kernels.
void time_residuals(const GpuMeasurements& g, const GpuSpec& gpu, std::span<double> r) {
  std::size_t i = 0;
  for (const auto* run : g.runs) r[i++] = std::log(predict_iteration_time_s(*run, gpu) / run->iteration_time_s);
  for (const auto* c : g.collectives) r[i++] = std::log(predict_collective_time_s(*c, gpu) / c->time_s);
  for (const auto* m : g.gemms) r[i++] = std::log(predict_gemm_tflops(*m, gpu) / m->tflops);
  for (const auto* a : g.attention) r[i++] = std::log(predict_attention_time_s(*a, gpu) / a->time_s);
  for (const auto* k : g.kernels) r[i++] = std::log(predict_kernel_time_s(*k, gpu) / k->time_s);
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
  // A GEMM's "after" is the fitted curve's: with the measured table it would be the measurement.
  GpuSpec after_curve = after;
  after_curve.measured_gemms.clear();
  for (const auto* m : g.gemms)
    out.push_back({m->id, std::string(kGemmKind), key, m->tflops, predict_gemm_tflops(*m, g.catalog),
                   predict_gemm_tflops(*m, after_curve)});
  for (const auto* a : g.attention)
    out.push_back({a->id, std::string(kAttentionKind), key, a->time_s, predict_attention_time_s(*a, g.catalog),
                   predict_attention_time_s(*a, after)});
  for (const auto* k : g.kernels)
    out.push_back({k->id, std::string(kKernelKind), key, k->time_s, predict_kernel_time_s(*k, g.catalog),
                   predict_kernel_time_s(*k, after)});
  return out;
}

// The GEMM rows a GEMM stage fitted (dense ones: grouped rows stay with the curve), as the profile
// keeps them.
std::vector<MeasuredGemm> measured_gemm_table(const GpuMeasurements& stage) {
  std::vector<MeasuredGemm> out;
  for (const auto* m : stage.gemms) out.emplace_back(m->m, m->n, m->k, m->fp8, m->tflops);
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

// Fits one stage's parameters to its measurements, from `start`; appends the ParameterFits of
// those the data moved and returns the GPU with them. Each residual evaluation prices every run
// of the stage: its work is taken from the caller's budget, if any.
GpuSpec fit_stage(const GpuMeasurements& g, const FitStage& stage, const GpuSpec& start, const CalibrationOptions& options,
                  std::vector<ParameterFit>& fits, std::int64_t& work) {
  const auto params = stage_parameters(stage, start, fits, options);
  const std::size_t m = g.time_count();
  if (params.empty() || m == 0) return start;
  std::vector<FitVariable> vars;
  for (const auto* p : params) {
    const double at = std::log(start.*(p->field));
    vars.push_back({at, std::min(at, std::log(p->lower)), std::max(at, std::log(p->upper)), options.prior_sigma});
  }
  std::int64_t evaluation_work = 0;  // of pricing every run once
  for (const auto* run : g.runs) evaluation_work += prediction_work(*run);
  const ResidualFunction f = [&](std::span<const double> x, std::span<double> r) {
    take_work(options.work_budget, evaluation_work, kCalibrationWorkField);
    work += evaluation_work;
    time_residuals(g, with_values(start, params, x), r);
  };
  const IdentifiabilityRule rule{options.min_sensitivity, options.min_independence, max_free_parameters(m, options)};
  const auto [free, result] = forward_selection(vars, m, f, rule, options.fit);
  GpuSpec out = start;  // parameters that stayed put keep their value exactly
  for (std::size_t j = 0; j < params.size(); ++j) {
    if (!free[j]) continue;
    ParameterFit fit = parameter_fit(g.catalog, *params[j]);
    fit.fitted = out.*(params[j]->field) = std::exp(result.x[j]);
    fit.uncertainty = result.sigma[j];
    fit.status = result.at_bound[j] ? ParameterStatus::at_bound : ParameterStatus::fitted;
    fits.push_back(fit);
  }
  return out;
}

// Fits the time parameters of one GPU type stage by stage; appends a ParameterFit for every
// time parameter (in priority order: those no stage moved are not_identified) and returns the GPU.
GpuSpec fit_time_parameters(const GpuMeasurements& g, const CalibrationOptions& options,
                            std::vector<ParameterFit>& fits, std::int64_t& work) {
  GpuSpec gpu = g.catalog;
  std::vector<ParameterFit> moved;
  for (const FitStage& stage : fit_stages()) {
    const GpuMeasurements measured = stage_measurements(g, stage.kind);
    gpu = fit_stage(measured, stage, gpu, options, moved, work);
    // Later stages (and the profile) price the measured shapes at their measurement.
    if (stage.kind == StageKind::gemms && term_allowed(ParameterTerm::compute, options)) gpu.measured_gemms = measured_gemm_table(measured);
  }
  for (const auto& p : calibration_parameters()) {
    if (p.term == ParameterTerm::memory || !term_allowed(p.term, options) || g.catalog.*p.field <= 0) continue;
    const auto it = std::find_if(moved.begin(), moved.end(), [&](const ParameterFit& f) { return f.name == p.name; });
    fits.push_back(it != moved.end() ? *it : parameter_fit(g.catalog, p));
  }
  return gpu;
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
    throw Error("calibrate", "no measurements", "at least one run, collective benchmark row, GEMM, attention call or kernel");
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

bool parameter_moved(const ParameterFit& fit) {
  return fit.status == ParameterStatus::fitted || fit.status == ParameterStatus::at_bound;
}

std::vector<std::string> identified_parameters(const CalibrationProfile& profile) {
  std::vector<std::string> out;
  for (const ParameterFit& p : profile.parameters)
    if (parameter_moved(p)) out.push_back(p.gpu_key + "." + p.name);
  return out;
}

GpuSpec calibrated_gpu(const GpuSpec& gpu, const CalibrationProfile& profile) {
  for (const GpuSpec& g : profile.gpus)
    if (g.key == gpu.key) return g;
  return gpu;
}

}  // namespace tessera
