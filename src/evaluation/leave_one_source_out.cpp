#include "evaluation/leave_one_source_out.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/error.h"

#include "catalog/gpu_catalog.h"

namespace tessera {

namespace {

// Golden-section search of the GEMM-efficiency multiplier (the fit: median |error| of a family's
// rows is unimodal in it to good approximation). Bounds: +-35% of the catalog value.
constexpr double kScaleLow = 0.65, kScaleHigh = 1.35;
constexpr int kSearchSteps = 14;  // interval shrinks by 0.618^14 ~ 1e-3
constexpr double kGolden = 0.6180339887498949;

CsvTable subset(const CsvTable& table, const std::vector<std::size_t>& rows) {
  CsvTable out;
  out.header = table.header;
  for (std::size_t i : rows) out.rows.push_back(table.rows[i]);
  return out;
}

// The catalog with every GPU of `family` at `scale` x its GEMM efficiencies.
std::vector<GpuSpec> scaled_catalog(const std::string& family, double scale) {
  std::vector<GpuSpec> gpus = gpu_catalog();
  for (GpuSpec& g : gpus)
    if (gemm_family(g.key) == family) {
      g.gemm_efficiency = std::min(1.0, g.gemm_efficiency * scale);
      g.fp8_gemm_efficiency = std::min(1.0, g.fp8_gemm_efficiency * scale);
    }
  return gpus;
}

double median_abs_error(const CsvTable& rows, const std::vector<GpuSpec>& gpus) {
  const ValidationReport report = validate_runs(rows, PipelineModel::simulated, &gpus);
  return report.summary.median_abs_error_pct;
}

double fit_scale(const CsvTable& rows, const std::string& family) {
  double lo = kScaleLow, hi = kScaleHigh;
  double a = hi - kGolden * (hi - lo), b = lo + kGolden * (hi - lo);
  double fa = median_abs_error(rows, scaled_catalog(family, a));
  double fb = median_abs_error(rows, scaled_catalog(family, b));
  for (int i = 0; i < kSearchSteps; ++i) {
    if (fa <= fb) {
      hi = b, b = a, fb = fa;
      a = hi - kGolden * (hi - lo);
      fa = median_abs_error(rows, scaled_catalog(family, a));
    } else {
      lo = a, a = b, fa = fb;
      b = lo + kGolden * (hi - lo);
      fb = median_abs_error(rows, scaled_catalog(family, b));
    }
  }
  return (lo + hi) / 2.0;
}

// Per accuracy class, in summarize_by_class's order: its rows' held-out errors and publishers.
std::vector<HeldOutClass> summarize_held_out(const std::vector<HeldOutRow>& rows) {
  std::vector<HeldOutClass> out;
  for (const char* name : kAccuracyClassOrder) {
    std::vector<double> errors;
    std::set<std::string> sources;
    for (const HeldOutRow& r : rows)
      if (r.accuracy_class == name) {
        errors.push_back(std::fabs(r.error_pct));
        sources.insert(r.source);
      }
    if (errors.empty()) continue;
    const ClassSummary s = abs_error_summary(name, errors);
    out.push_back({name, sources.size(), s.n, s.median_abs_error_pct, s.p90_abs_error_pct, s.max_abs_error_pct});
  }
  return out;
}

}  // namespace

double time_error_pct(const std::string& metric, double error_pct) {
  if (metric == "iter_time_s") return error_pct;
  return 100.0 * (1.0 / (1.0 + error_pct / 100.0) - 1.0);
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
        if (!training.empty()) scale = fit_scale(subset(table, training), family);
      }
      const std::vector<GpuSpec> gpus = scaled_catalog(family, scale);
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
