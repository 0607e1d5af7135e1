#include "report/calibration_report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/core.h>

#include "core/percentile.h"

namespace tessera {

namespace {

std::string uncertainty_text(const ParameterFit& p) {
  if (p.status == ParameterStatus::not_identified || p.status == ParameterStatus::not_measured) return "";
  if (p.name == "memory_reserve_gib") return fmt::format("±{:.2f} GiB", p.uncertainty);
  return fmt::format("±{:.1f}%", 100.0 * (std::exp(p.uncertainty) - 1.0));
}

std::string value_text(double v) { return fmt::format("{:.4g}", v); }

}  // namespace

std::string calibration_text(const CalibrationProfile& profile, const ProfileInputs& inputs, bool per_measurement) {
  std::string out = "calibrated on " + inputs.counts_text() + "\n";
  if (per_measurement) {
    out += fmt::format("\n{:<44} {:<18} {:>11} {:>11} {:>11} {:>8} {:>8}\n", "measurement", "kind", "measured",
                       "before", "after", "before%", "after%");
    for (const auto& m : profile.measurements)
      out += fmt::format("{:<44} {:<18} {:>11.4g} {:>11.4g} {:>11.4g} {:>+8.1f} {:>+8.1f}\n", m.id, m.kind, m.measured,
                         m.before, m.after, m.error_before_pct(), m.error_after_pct());
  }
  out += fmt::format("\n{:<24} {:<16} {:>10} {:>10} {:>12}  {}\n", "parameter", "gpu", "catalog", "fitted", "±1 sigma",
                     "status");
  for (const auto& p : profile.parameters)
    out += fmt::format("{:<24} {:<16} {:>10} {:>10} {:>12}  {}\n", p.name, p.gpu_key, value_text(p.catalog),
                       value_text(p.fitted), uncertainty_text(p), parameter_status_name(p.status));
  out += fmt::format("\n|error| median over the time measurements: {:.1f}% with the catalog, {:.1f}% calibrated\n",
                     profile.median_abs_error_before_pct, profile.median_abs_error_after_pct);
  if (identified_parameters(profile).empty())
    out += "nothing was identified: every parameter keeps its catalog value (no parameter moves these measurements "
           "enough, or each is confounded with one before it; README \"What is fitted\")\n";
  return out;
}

}  // namespace tessera

namespace tessera {

namespace {
struct Spread {
  double min = 0, median = 0, max = 0;
};
Spread spread(const std::vector<double>& v) { return {percentile(v, 0), median(v), percentile(v, 100)}; }

// A group (a model name or a source URL) in its column: the end of a URL is what tells sources apart.
constexpr std::size_t kGroupColumnWidth = 44;
std::string group_column(const std::string& group) {
  return group.size() > kGroupColumnWidth ? group.substr(group.size() - kGroupColumnWidth) : group;
}

// "gpu.parameter x ratio" of every parameter a draw moved (fitted or at a bound), or "nothing".
std::string moved_text(const HeldOutDraw& draw) {
  std::string out;
  for (const auto& p : draw.parameters) {
    if (!parameter_moved(p)) continue;
    if (!out.empty()) out += ", ";
    out += p.name == "memory_reserve_gib" ? fmt::format("{}.{} {:+.2f} GiB", p.gpu_key, p.name, p.fitted - p.catalog)
                                          : fmt::format("{}.{} x{:.3f}", p.gpu_key, p.name, p.fitted / p.catalog);
  }
  return out.empty() ? "nothing" : out;
}

std::string draws_text(const HeldOutCalibration& result) {
  std::string out = fmt::format("{:<44} {:>6}  {:>8} {:>8}  {}\n", "draw: group", "seed", "before%", "after%", "moved");
  for (const auto& d : result.draws) {
    std::string fitted;
    for (const auto& id : d.fitted_on) fitted += (fitted.empty() ? "" : ", ") + id;
    out += fmt::format("{:<44} {:>6}  {:>8.1f} {:>8.1f}  {}\n  fitted on {}\n", group_column(d.group), d.seed,
                       d.median_abs_error_before_pct, d.median_abs_error_after_pct, moved_text(d), fitted);
  }
  return out + "\n";
}

}  // namespace

std::string held_out_text(const HeldOutCalibration& result, bool per_draw) {
  std::map<std::string, std::vector<const HeldOutDraw*>> groups;
  for (const auto& d : result.draws) groups[d.group].push_back(&d);
  std::string out = per_draw ? draws_text(result) : std::string();
  out += fmt::format("{:<44} {:>5} {:>9}  {:>24}  {:>8}\n", "group (rows not fitted on)", "draws", "catalog%",
                     "calibrated% min/med/max", "Spearman");
  for (const auto& [group, draws] : groups) {
    std::vector<double> before, after, rho;
    for (const auto* d : draws) {
      before.push_back(d->median_abs_error_before_pct);
      after.push_back(d->median_abs_error_after_pct);
      if (d->spearman_groups > 0) rho.push_back(d->mean_spearman_after);
    }
    const Spread b = spread(before), a = spread(after), r = spread(rho);
    out += fmt::format("{:<44} {:>5} {:>9.1f}  {:>8.1f}/{:>6.1f}/{:>6.1f}  {:>8}\n", group_column(group), draws.size(),
                       b.median, a.min, a.median, a.max, rho.empty() ? std::string("-") : fmt::format("{:.3f}", r.median));
  }
  out += fmt::format("\nover {} draws: held-out |error| median {:.1f}% with the catalog, {:.1f}% calibrated",
                     result.draws.size(), result.median_abs_error_before_pct, result.median_abs_error_after_pct);
  if (result.mean_spearman_after > 0)
    out += fmt::format("; mean Spearman {:.3f} -> {:.3f}", result.mean_spearman_before, result.mean_spearman_after);
  out += "\n";
  return out;
}

}  // namespace tessera
