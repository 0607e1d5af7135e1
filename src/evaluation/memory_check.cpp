#include "evaluation/memory_check.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "core/error.h"
#include "core/percentile.h"
#include "core/units.h"
#include "formats/integer_text.h"
#include "model/parameter_count.h"

namespace tessera {

namespace {

constexpr const char* kColumns = "id, ran, peak_allocated_gib, peak_reserved_gib, params";

int required_column(const CsvTable& t, const char* name) {
  const int c = t.column(name);
  if (c < 0) throw Error(std::string("memory.") + name, "column missing", kColumns);
  return c;
}

// A non-negative number, or -1 for an empty cell.
double peak_value(const std::string& text, const char* column) {
  if (text.empty()) return -1;
  const std::string field = std::string("memory.") + column;
  const double v = parse_number(text, field);
  if (!(v >= 0)) throw Error(field, "negative: " + text, "a number >= 0, or empty");
  return v;
}

const ValidationResult* find_run(const ValidationReport& report, const std::string& id) {
  for (const auto* rows : {&report.rows, &report.configurations})
    for (const ValidationResult& r : *rows)
      if (r.id == id) return &r;
  return nullptr;
}

MemoryCheckRow check_one(const MeasuredPeak& peak, const ValidationResult& run) {
  MemoryCheckRow row;
  row.id = peak.id;
  row.ran = peak.ran;
  const MemoryBreakdown& mem = run.estimate.memory;
  row.predicted_total_gib = run.estimate.peak_memory_bytes / units::kGiB;
  row.predicted_gib = (mem.total() - mem.framework_bytes) / units::kGiB;
  row.usable_gib = run.estimate.usable_memory_bytes / units::kGiB;
  row.predicted_fits = run.estimate.fits;
  row.measured_gib = peak.allocated_gib;
  if (peak.allocated_gib > 0) row.error_pct = 100.0 * (row.predicted_gib - peak.allocated_gib) / peak.allocated_gib;
  if (peak.params > 0) {
    const double params = count_parameters(run.model).total();
    row.params_error_pct = 100.0 * (params - peak.params) / peak.params;
  }
  return row;
}

}  // namespace

std::vector<MeasuredPeak> read_measured_peaks(const CsvTable& t) {
  const int id = required_column(t, "id");
  const int ran = required_column(t, "ran");
  const int allocated = required_column(t, "peak_allocated_gib");
  const int reserved = t.column("peak_reserved_gib");
  const int params = t.column("params");
  std::vector<MeasuredPeak> out;
  std::set<std::string> seen;
  for (const auto& cells : t.rows) {
    auto cell = [&cells](int c) { return c < 0 ? std::string() : cells[static_cast<std::size_t>(c)]; };
    MeasuredPeak p;
    p.id = cell(id);
    if (p.id.empty()) throw Error("memory.id", "empty", "an id of the runs file");
    if (!seen.insert(p.id).second) throw Error("memory.id", "'" + p.id + "' given twice", "each id once");
    const std::string verdict = cell(ran);
    if (verdict != "yes" && verdict != "out_of_memory")
      throw Error("memory.ran", "unknown value '" + verdict + "' for " + p.id, "yes, out_of_memory");
    p.ran = verdict == "yes";
    p.allocated_gib = peak_value(cell(allocated), "peak_allocated_gib");
    p.reserved_gib = peak_value(cell(reserved), "peak_reserved_gib");
    p.params = peak_value(cell(params), "params");
    if (p.ran && p.allocated_gib < 0)
      throw Error("memory.peak_allocated_gib", "missing for " + p.id + ", which ran", "the measured peak in GiB");
    out.push_back(std::move(p));
  }
  return out;
}

MemoryCheck check_memory(const std::vector<MeasuredPeak>& peaks, const ValidationReport& report) {
  MemoryCheck check;
  std::vector<double> errors;
  for (const MeasuredPeak& peak : peaks) {
    const ValidationResult* run = find_run(report, peak.id);
    if (run == nullptr) throw Error("memory.id", "'" + peak.id + "' is not a row of the runs files", "ids of the runs files");
    MemoryCheckRow row = check_one(peak, *run);
    if (row.measured_gib > 0) errors.push_back(std::fabs(row.error_pct));
    (row.predicted_fits ? (row.ran ? check.fits_ran : check.fits_oom) : (row.ran ? check.no_fit_ran : check.no_fit_oom)) += 1;
    check.rows.push_back(std::move(row));
  }
  check.measured = errors.size();
  check.median_abs_error_pct = percentile(errors, 50);
  if (!errors.empty()) check.max_abs_error_pct = *std::max_element(errors.begin(), errors.end());
  return check;
}

}  // namespace tessera
