// tessera validate FILE.csv [FILE.csv ...] [--memory PEAKS.csv] [--json] [--html OUT]
// [--leave-one-source-out | --accuracy-classes]: predicted vs measured for published runs,
// predicted vs measured peak memory, the out-of-sample check per accuracy class, and the
// accuracy-class table it all gives.
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "catalog/published_runs.h"
#include "cli/profile_note.h"
#include "cli/subcommands.h"
#include "core/error.h"
#include "evaluation/accuracy_classes.h"
#include "evaluation/leave_one_source_out.h"
#include "evaluation/memory_check.h"
#include "evaluation/validation.h"
#include "formats/csv_table.h"
#include "formats/json_fields.h"
#include "formats/schema.h"
#include "report/estimate_report.h"
#include "report/html_file.h"
#include "report/validate_page.h"

namespace tessera::cli {

namespace {
nlohmann::json memory_check_to_json(const MemoryCheck& m) {
  nlohmann::json rows = nlohmann::json::array();
  for (const MemoryCheckRow& r : m.rows)
    rows.push_back({{"id", r.id},
                    {"ran", r.ran},
                    {"predicted_fits", r.predicted_fits},
                    {"verdict_right", r.verdict_right()},
                    {"measured_allocated_gib", r.measured_gib < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.measured_gib)},
                    {"predicted_allocated_gib", r.predicted_gib},
                    {"predicted_total_gib", r.predicted_total_gib},
                    {"usable_gib", r.usable_gib},
                    {"error_pct", r.measured_gib < 0 ? nlohmann::json(nullptr) : nlohmann::json(r.error_pct)},
                    {"params_error_pct", r.params_error_pct}});
  return {{"rows", rows},
          {"summary",
           {{"measured", m.measured},
            {"median_abs_error_pct", m.median_abs_error_pct},
            {"max_abs_error_pct", m.max_abs_error_pct},
            {"fits_ran", m.fits_ran},
            {"fits_out_of_memory", m.fits_oom},
            {"does_not_fit_ran", m.no_fit_ran},
            {"does_not_fit_out_of_memory", m.no_fit_oom}}}};
}

// Each held-out row, then the summary per accuracy class and overall (or one JSON document).
void print_leave_one_source_out(const CommandOutput& io, const LeaveOneSourceOut& loso, bool json) {
  if (json) {
    nlohmann::json out = {{"schema_version", kSchemaVersion}, {"rows", nlohmann::json::array()},
                          {"classes", nlohmann::json::array()}};
    for (const auto& r : loso.rows)
      out["rows"].push_back({{"source", r.source}, {"id", r.id}, {"class", r.accuracy_class}, {"error_pct", r.error_pct},
                             {"time_error_pct", r.time_error_pct}, {"gemm_scale", r.gemm_scale}});
    for (const auto& k : loso.classes)
      out["classes"].push_back({{"class", k.name}, {"sources", k.sources}, {"n", k.n},
                                {"median_abs_error_pct", k.median_abs_error_pct},
                                {"p90_abs_error_pct", k.p90_abs_error_pct}, {"max_abs_error_pct", k.max_abs_error_pct}});
    out["summary"] = {{"n", loso.rows.size()},
                      {"sources", loso.sources.size()},
                      {"median_abs_error_pct", loso.median_abs_error_pct},
                      {"p90_abs_error_pct", loso.p90_abs_error_pct},
                      {"max_abs_error_pct", loso.max_abs_error_pct}};
    io.print("{}\n", json_fields::to_text(out, 2));
    return;
  }
  io.print("{:<40} {:<14} {:>8} {:>11}  {}\n", "id", "class", "error%", "gemm scale", "held-out source");
  for (const auto& r : loso.rows)
    io.print("{:<40} {:<14} {:>+8.1f} {:>11.3f}  {}\n", r.id, r.accuracy_class, r.error_pct, r.gemm_scale, r.source);
  io.print("\nleave-one-source-out over {} sources, {} rows: |error| median {:.1f}%  p90 {:.1f}%  max {:.1f}%\n",
           loso.sources.size(), loso.rows.size(), loso.median_abs_error_pct, loso.p90_abs_error_pct,
           loso.max_abs_error_pct);
  for (const auto& k : loso.classes) {
    const std::string figures = k.sources < static_cast<std::size_t>(kMinClassSources)
                                    ? std::string("one source: too few to measure out of sample")
                                    : fmt::format("|error| median {:.1f}%  p90 {:.1f}%  max {:.1f}%",
                                                  k.median_abs_error_pct, k.p90_abs_error_pct, k.max_abs_error_pct);
    io.print("  {:<14} {:>4} rows, {} source{}: {}\n", k.name, k.n, k.sources, k.sources == 1 ? "" : "s", figures);
  }
}

void print_memory_check(const CommandOutput& io, const MemoryCheck& m) {
  io.print("\nmemory: predicted allocated peak vs measured (GiB), and the verdict\n");
  io.print("{:<40} {:>14} {:>10} {:>10} {:>8} {:>12} {:>6}\n", "id", "ran", "measured", "predicted", "error%",
           "total/usable", "right");
  for (const MemoryCheckRow& r : m.rows) {
    const std::string measured = r.measured_gib < 0 ? "-" : fmt::format("{:.2f}", r.measured_gib);
    const std::string error = r.measured_gib < 0 ? "-" : fmt::format("{:+.1f}", r.error_pct);
    io.print("{:<40} {:>14} {:>10} {:>10.2f} {:>8} {:>5.1f}/{:<6.1f} {:>6}\n", r.id, r.ran ? "yes" : "out_of_memory",
             measured, r.predicted_gib, error, r.predicted_total_gib, r.usable_gib, r.verdict_right() ? "yes" : "NO");
  }
  io.print("memory peaks {}: |error| median {:.1f}%  max {:.1f}%; verdicts: fits & ran {}, does not fit & out of memory {}, "
           "fits & out of memory {} (wrong), does not fit & ran {} (wrong)\n",
           m.measured, m.median_abs_error_pct, m.max_abs_error_pct, m.fits_ran, m.no_fit_oom, m.fits_oom, m.no_fit_ran);
}
struct ValidateOptions {
  std::vector<std::string> files;
  std::string html, memory;
  std::string pipeline = "simulated";
  bool json = false;
  bool leave_one_source_out = false;
  bool accuracy_classes = false;
};

void add_validate_flags(CLI::App& sub, ValidateOptions& o) {
  sub.add_option("file", o.files,
                 "Validation CSVs (data/validation/README.md schema) or the shipped published runs by name "
                 "(public_runs, moe_runs, vtrain_runs, h200/runs); ids unique across them")
      ->required();
  sub.add_option("--memory", o.memory,
                 "Measured peaks (id, ran, peak_allocated_gib[, peak_reserved_gib, params]) of the files' runs, or "
                 "h200/memory: each peak's error and the fits / does-not-fit verdicts");
  sub.add_flag("--json", o.json, "Print one JSON document");
  sub.add_option("--html", o.html, "Write a self-contained HTML report (predicted vs measured, worst rows)");
  sub.add_flag("--leave-one-source-out", o.leave_one_source_out,
               "Refit the GPU families' GEMM efficiency without each source's rows, then predict them; "
               "per accuracy class");
  sub.add_flag("--accuracy-classes", o.accuracy_classes,
               "Print the accuracy-class table (data/accuracy_classes.json) these files and --memory give");
  sub.add_option("--pipeline", o.pipeline, "Pipeline term: simulated (default) or closed-form")
      ->capture_default_str();
}

void check_validate_flags(const ValidateOptions& o) {
  if (o.pipeline != "simulated" && o.pipeline != "closed-form")
    throw Error("--pipeline", "unknown value '" + o.pipeline + "'", "simulated, closed-form");
  const bool held_out = o.leave_one_source_out || o.accuracy_classes;
  if (held_out && !o.html.empty())
    throw Error("--html", "not available with --leave-one-source-out or --accuracy-classes", "--html without them");
  if (o.leave_one_source_out && o.accuracy_classes)
    throw Error("--accuracy-classes", "not with --leave-one-source-out (the table includes it)", "one of the two");
  if (o.leave_one_source_out && !o.memory.empty())
    throw Error("--memory", "not with --leave-one-source-out", "--memory without --leave-one-source-out");
}

// Each file by name or path. A table with no rows is refused: a summary over nothing ("median
// 0.0%") would read as a perfect score.
std::vector<CsvTable> read_validation_tables(const std::vector<std::string>& files) {
  std::vector<CsvTable> tables;
  for (const std::string& f : files) {
    const PublishedRunsText table = load_published_runs_text(f, "file");
    tables.push_back(parse_csv(table.text, table.name));
    if (tables.back().rows.empty())
      throw Error("file", "'" + table.name + "' has a header and no runs", "a validation CSV with at least one row");
  }
  return tables;
}

nlohmann::json validation_row_json(const ValidationResult& r) {
  return {{"id", r.id},
          {"metric", r.metric},
          {"measured", r.measured},
          {"predicted", r.predicted},
          {"error_pct", r.error_pct},
          {"measured_time_s", r.measured_time_s},
          {"predicted_time_s", r.predicted_time_s},
          {"class", accuracy_class(r)},
          {"fits", r.fits},
          {"assumed", r.assumed},
          {"plan", r.plan},
          {"estimate", estimate_to_json(r.estimate)}};
}

nlohmann::json validation_summary_json(const ValidationReport& report) {
  const auto& s = report.summary;
  nlohmann::json out = {{"n", s.n},
                        {"median_abs_error_pct", s.median_abs_error_pct},
                        {"p90_abs_error_pct", s.p90_abs_error_pct},
                        {"max_abs_error_pct", s.max_abs_error_pct},
                        {"mean_group_spearman", s.mean_group_spearman},
                        {"spearman_groups", s.spearman_groups},
                        {"mean_model_gpus_spearman", s.mean_model_gpus_spearman},
                        {"model_gpus_groups", s.model_gpus_groups},
                        {"classes", nlohmann::json::array()}};
  for (const ClassSummary& k : summarize_by_class(report))
    out["classes"].push_back({{"class", k.name},
                              {"n", k.n},
                              {"median_abs_error_pct", k.median_abs_error_pct},
                              {"p90_abs_error_pct", k.p90_abs_error_pct},
                              {"max_abs_error_pct", k.max_abs_error_pct}});
  return out;
}

// The --json document (also what the --html page is built from).
nlohmann::json validation_json(const ValidationReport& report, const std::optional<MemoryCheck>& memory) {
  nlohmann::json out = {{"schema_version", kSchemaVersion},
                        {"rows", nlohmann::json::array()},
                        {"skipped", nlohmann::json::array()}};
  for (const auto& r : report.rows) out["rows"].push_back(validation_row_json(r));
  for (const auto& k : report.skipped) out["skipped"].push_back({{"id", k.id}, {"reason", k.reason}});
  out["summary"] = validation_summary_json(report);
  if (memory) out["memory"] = memory_check_to_json(*memory);
  note_profile(out);
  return out;
}

void print_validation_table(const CommandOutput& io, const ValidationReport& report,
                            const std::optional<MemoryCheck>& memory) {
  const auto& s = report.summary;
  io.print("{:<40} {:<24} {:>11} {:>11} {:>8}  {}\n", "id", "metric", "measured", "predicted", "error%", "assumed");
  for (const auto& r : report.rows) {
    std::string assumed;
    for (const auto& [k, v] : r.assumed) assumed += (assumed.empty() ? "" : " ") + k + "=" + v;
    io.print("{:<40} {:<24} {:>11.4g} {:>11.4g} {:>+8.1f}  {}\n", r.id, r.metric, r.measured, r.predicted,
             r.error_pct, assumed);
  }
  for (const auto& k : report.skipped) io.print("skipped {}: {}\n", k.id, k.reason);
  io.print("\nrows modelled {} of {}; |error| median {:.1f}%  p90 {:.1f}%  max {:.1f}%\n", s.n,
           s.n + report.skipped.size(), s.median_abs_error_pct, s.p90_abs_error_pct, s.max_abs_error_pct);
  for (const ClassSummary& k : summarize_by_class(report))
    io.print("  {:<12} {:>4} rows: |error| median {:.1f}%  p90 {:.1f}%  max {:.1f}%\n", k.name, k.n,
             k.median_abs_error_pct, k.p90_abs_error_pct, k.max_abs_error_pct);
  if (s.spearman_groups > 0)
    io.print("mean Spearman rank correlation over {} groups of equal (model, GPUs, batch): {:.3f}\n",
             s.spearman_groups, s.mean_group_spearman);
  if (s.model_gpus_groups > 0)
    io.print("mean Spearman rank correlation over {} groups of equal (model, GPUs): {:.3f}\n", s.model_gpus_groups,
             s.mean_model_gpus_spearman);
  if (memory) print_memory_check(io, *memory);
  io.print("{}", profile_note());
}

int run_validate(const ValidateOptions& o, const CommandOutput& io) {
  check_validate_flags(o);
  const std::vector<CsvTable> tables = read_validation_tables(o.files);
  if (o.leave_one_source_out) {
    print_leave_one_source_out(io, leave_one_source_out(concatenate_tables(tables)), o.json);
    return 0;
  }
  const ValidationReport report =
      validate_files(tables, o.pipeline == "simulated" ? PipelineModel::simulated : PipelineModel::closed_form);
  std::optional<MemoryCheck> memory;
  if (!o.memory.empty()) memory = check_memory(read_measured_peaks(load_published_runs(o.memory, "--memory")), report);
  if (o.accuracy_classes) {
    const LeaveOneSourceOut loso = leave_one_source_out(concatenate_tables(tables));
    nlohmann::json doc = accuracy_table_to_json(accuracy_table_from(report, loso, memory ? &*memory : nullptr));
    doc["source"] = "tessera validate --accuracy-classes (scripts/accuracy_classes.py)";
    io.print("{}\n", json_fields::to_text(doc, 2));
    return 0;
  }
  if (o.json || !o.html.empty()) {
    const nlohmann::json out = validation_json(report, memory);
    if (!o.html.empty()) write_html_file(o.html, report::validate_page_html(out, o.files.front()));
    if (o.json) {
      io.print("{}\n", json_fields::to_text(out, 2));
      return 0;
    }
  }
  print_validation_table(io, report, memory);
  return 0;
}

}  // namespace

void register_validate(CLI::App& app, CommandRegistry& commands) {
  auto* sub = app.add_subcommand("validate", "Compare predictions with published measured runs");
  auto o = std::make_shared<ValidateOptions>();
  add_validate_flags(*sub, *o);
  commands.add(sub, [o, &io = commands.output()]() { return run_validate(*o, io); });
}

}  // namespace tessera::cli
