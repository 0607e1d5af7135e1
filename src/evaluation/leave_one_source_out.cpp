#include "evaluation/leave_one_source_out.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/error.h"
#include "core/percentile.h"

#include "catalog/gpu_catalog.h"

namespace tessera {

namespace {

// The refit's bounds: +-35% of the catalog's GEMM efficiencies; bisection halves the interval
// each step (0.7 / 2^20 < 1e-6).
constexpr double kScaleLow = 0.65, kScaleHigh = 1.35;
constexpr int kBisectionSteps = 20;

CsvTable subset(const CsvTable& table, const std::vector<std::size_t>& rows) {
  CsvTable out;
  out.header = table.header;
  for (std::size_t i : rows) out.rows.push_back(table.rows[i]);
  return out;
}

// Per accuracy class, in summarize_by_class's order: its rows' held-out errors and publishers.
std::vector<HeldOutClass> summarize_held_out(const std::vector<HeldOutRow>& rows) {
  std::vector<HeldOutClass> out;
  for (const char* name : kAccuracyClassOrder) {
    std::vector<double> errors, time_errors;
    std::set<std::string> sources;
    for (const HeldOutRow& r : rows)
      if (r.accuracy_class == name) {
        errors.push_back(std::fabs(r.error_pct));
        time_errors.push_back(r.time_error_pct);
        sources.insert(r.source);
      }
    if (errors.empty()) continue;
    const ClassSummary s = abs_error_summary(name, errors);
    out.push_back({name, sources.size(), s.n, s.median_abs_error_pct, s.p90_abs_error_pct, s.max_abs_error_pct,
                   median(std::move(time_errors))});
  }
  return out;
}

}  // namespace

double time_error_pct(const std::string& metric, double error_pct) {
  if (metric == "iter_time_s") return error_pct;
  return 100.0 * (1.0 / (1.0 + error_pct / 100.0) - 1.0);
}

std::vector<GpuSpec> scaled_gemm_catalog(const std::string& family, double scale) {
  std::vector<GpuSpec> gpus = gpu_catalog();
  for (GpuSpec& g : gpus)
    if (gemm_family(g.key) == family) {
      g.gemm_efficiency = std::min(1.0, g.gemm_efficiency * scale);
      g.fp8_gemm_efficiency = std::min(1.0, g.fp8_gemm_efficiency * scale);
    }
  return gpus;
}

double median_log_time_ratio(const CsvTable& rows, const std::vector<GpuSpec>& gpus) {
  const ValidationReport report = validate_runs(rows, PipelineModel::simulated, &gpus);
  std::vector<double> ratios;
  ratios.reserve(report.rows.size());
  for (const ValidationResult& r : report.rows) ratios.push_back(std::log(r.predicted_time_s / r.measured_time_s));
  return median(std::move(ratios));
}

double median_unbiased_gemm_scale(const CsvTable& rows, const std::string& family) {
  double lo = kScaleLow, hi = kScaleHigh;
  for (int i = 0; i < kBisectionSteps; ++i) {
    const double mid = 0.5 * (lo + hi);
    // Predicted slower than measured at the median: the GEMMs must run faster.
    if (median_log_time_ratio(rows, scaled_gemm_catalog(family, mid)) > 0.0) lo = mid;
    else hi = mid;
  }
  return 0.5 * (lo + hi);
}

CsvTable concatenate_tables(const std::vector<CsvTable>& tables) {
  CsvTable out;
  if (tables.empty()) return out;
  out.header = tables.front().header;
  for (const CsvTable& t : tables) {
    if (t.header != out.header)
      throw Error("csv.columns", "the files' columns differ", "validation files with the same header row");
    out.rows.insert(out.rows.end(), t.rows.begin(), t.rows.end());
  }
  return out;
}

std::string source_key(const std::string& url) {
  const std::string github = "https://github.com/";
  if (url.rfind(github, 0) != 0) return url;
  const std::size_t owner_end = url.find('/', github.size());
  if (owner_end == std::string::npos) return url;
  const std::size_t repo_end = url.find('/', owner_end + 1);
  return url.substr(0, repo_end);
}

LeaveOneSourceOut leave_one_source_out(const CsvTable& table) {
  const int source_col = table.column("source"), gpu_col = table.column("gpu"), id_col = table.column("id");
  LeaveOneSourceOut out;
  if (source_col < 0 || gpu_col < 0 || id_col < 0) return out;
  std::map<std::string, std::vector<std::size_t>> by_source;
  for (std::size_t i = 0; i < table.rows.size(); ++i)
    by_source[source_key(table.rows[i][static_cast<std::size_t>(source_col)])].push_back(i);
  std::vector<double> errors;
  for (const auto& [source, held_out] : by_source) {
    out.sources.push_back(source);
    // Families among the held-out rows, each refitted on the other sources' rows of that family.
    std::map<std::string, std::vector<std::size_t>> held_by_family;
    for (std::size_t i : held_out)
      held_by_family[gemm_family(table.rows[i][static_cast<std::size_t>(gpu_col)])].push_back(i);
    for (const auto& [family, rows] : held_by_family) {
      double scale = 1.0;
      if (!family.empty()) {
        std::vector<std::size_t> training;
        for (std::size_t i = 0; i < table.rows.size(); ++i)
          if (std::find(held_out.begin(), held_out.end(), i) == held_out.end() &&
              gemm_family(table.rows[i][static_cast<std::size_t>(gpu_col)]) == family)
            training.push_back(i);
        if (!training.empty()) scale = median_unbiased_gemm_scale(subset(table, training), family);
      }
      const std::vector<GpuSpec> gpus = scaled_gemm_catalog(family, scale);
      const ValidationReport report = validate_runs(subset(table, rows), PipelineModel::simulated, &gpus);
      for (const ValidationResult& r : report.rows) {
        out.rows.push_back({source, r.id, accuracy_class(r), r.error_pct, time_error_pct(r.metric, r.error_pct), scale});
        errors.push_back(std::fabs(r.error_pct));
      }
    }
  }
  out.classes = summarize_held_out(out.rows);
  const ClassSummary all = abs_error_summary("held out", errors);
  out.median_abs_error_pct = all.median_abs_error_pct;
  out.p90_abs_error_pct = all.p90_abs_error_pct;
  out.max_abs_error_pct = all.max_abs_error_pct;
  return out;
}

}  // namespace tessera
