// tessera calibrate [--runs FILE.csv]... [--log FILE]... [--nccl FILE[@NxG]]... [--gemm FILE]
//                   [-o PROFILE.json] [--report] [--json]: fits the cost model's parameters to the
// user's own measurements and writes the profile that --profile applies.
// tessera calibrate --held-out FILE.csv [--group G] [--fit-rows N] [--draws D] [--seed S] [--report]:
// per group, fits on a few rows drawn at random and predicts the rest (--report: every draw).
#include <fstream>
#include <map>

#include <nlohmann/json.hpp>

#include "calibrate/calibration.h"
#include "catalog/published_runs.h"
#include "cli/subcommands.h"
#include "core/error.h"
#include "evaluation/calibration_inputs.h"
#include "evaluation/leave_one_source_out.h"
#include "evaluation/validation.h"
#include "formats/calibration_profile_json.h"
#include "formats/csv_table.h"
#include "formats/json_fields.h"
#include "report/calibration_report.h"

namespace tessera::cli {

namespace {

ProfileInputs inputs_summary(const CalibrationData& data, const CalibrationInputs& in, const CalibrationProfile& profile) {
  ProfileInputs out;
  out.runs = data.runs.size();
  out.collectives = data.collectives.size();
  out.gemms = data.gemms.size();
  out.attention = data.attention.size();
  out.kernels = data.kernels.size();
  for (const auto* list : {&in.runs_files, &in.log_files, &in.nccl_arguments})
    out.files.insert(out.files.end(), list->begin(), list->end());
  for (const auto* file : {&in.gemm_file, &in.attention_file, &in.kernels_file, &in.probe_folder})
    if (!file->empty()) out.files.push_back(*file);
  out.identified = identified_parameters(profile);
  return out;
}

void write_profile(const std::string& path, const nlohmann::json& profile) {
  std::ofstream file(path);
  if (!file) throw Error("-o", "cannot write '" + path + "'", "a writable file path");
  file << json_fields::to_text(profile, 2) << "\n";
  if (!file) throw Error("-o", "cannot write '" + path + "'", "a writable file path");
}

// Limits of --held-out: each draw is one calibration, so the work is groups x draws fits.
constexpr std::int64_t kMaxDraws = 1000;
constexpr std::int64_t kMaxFitRows = 1000;

template <typename Options>
std::string held_out_report(const Options& o) {
  if (o.group != "model" && o.group != "source")
    throw Error("--group", "unknown value '" + o.group + "'", "model, source");
  if (o.fit_rows < 1 || o.fit_rows > kMaxFitRows)
    throw Error("--fit-rows", std::to_string(o.fit_rows), "an integer from 1 to " + std::to_string(kMaxFitRows));
  if (o.draws < 1 || o.draws > kMaxDraws)
    throw Error("--draws", std::to_string(o.draws), "an integer from 1 to " + std::to_string(kMaxDraws));
  if (o.seed < 0) throw Error("--seed", std::to_string(o.seed), "an integer >= 0");
  const CsvTable table = load_published_runs(o.held_out, "--held-out");
  const ValidationReport report = validate_runs(table);
  HeldOutOptions options;
  options.rows_per_draw = static_cast<std::size_t>(o.fit_rows);
  options.draws = static_cast<std::size_t>(o.draws);
  options.seed = static_cast<std::uint64_t>(o.seed);
  options.work_budget = kMaxHeldOutWork;
  std::map<std::string, std::string> source_of;
  const int id_column = table.column("id"), source_column = table.column("source");
  if (o.group == "source" && (id_column < 0 || source_column < 0))
    throw Error("--held-out", o.held_out + " has no id / source column", "the validation CSV schema");
  if (source_column >= 0)
    for (const auto& row : table.rows)
      source_of[row.at(static_cast<std::size_t>(id_column))] = row.at(static_cast<std::size_t>(source_column));
  const auto group_of = [&](const ValidationResult& r) {
    return o.group == "model" ? r.model_name : source_key(source_of[r.id]);
  };
  return held_out_text(held_out_calibration(report.rows, group_of, options), o.report);
}

}  // namespace

void register_calibrate(CLI::App& app, CommandRegistry& commands) {
  auto* sub = app.add_subcommand("calibrate", "Fit the cost model to measurements of your own cluster");
  struct Options {
    CalibrationInputs inputs;
    std::string output;
    bool report = false;
    bool json = false;
    std::string held_out, group = "model";
    std::int64_t fit_rows = 5, draws = 20, seed = 1;
  };
  auto o = std::make_shared<Options>();
  sub->add_option("--runs", o->inputs.runs_files, "Measured runs, CSV in the validation schema (repeatable)");
  sub->add_option("--log", o->inputs.log_files, "Megatron-LM or torchtitan training log (repeatable)");
  sub->add_option("--nccl", o->inputs.nccl_arguments, "nccl-tests output, FILE or FILE@NODESxGPUS (repeatable)");
  sub->add_option("--gemm", o->inputs.gemm_file, "GEMM sweep CSV: m,n,k,dtype,tflops");
  sub->add_option("--attention", o->inputs.attention_file,
                  "Fused-attention timings CSV: batch,heads,kv_heads,seq,head_dim,fwd_ms,fwd_bwd_ms");
  sub->add_option("--kernels", o->inputs.kernels_file,
                  "Memory-bound kernel timings CSV: op,impl,tokens,width,pass,bytes,kernels,time_ms");
  sub->add_option("--probe", o->inputs.probe_folder, "A `tessera probe` output folder, read whole");
  sub->add_option("--gpu", o->inputs.gpu, "GPU of the logs, nccl-tests outputs and GEMM sweep");
  sub->add_option("--model", o->inputs.model, "Model of the logs, where their launch arguments do not say");
  sub->add_option("--cluster", o->inputs.cluster, "Cluster of the logs (GPU:COUNT), where their arguments do not say");
  sub->add_option("--plan", o->inputs.plan, "Plan of the logs (Tessera shorthand); checked against their arguments");
  sub->add_option("--megatron-args", o->inputs.megatron_args, "Plan of the logs as a Megatron-LM argument list");
  sub->add_option("--torchtitan-config", o->inputs.torchtitan_config, "Plan of the logs as a torchtitan recipe file");
  sub->add_option("-o,--output", o->output, "Write the profile JSON here (for --profile)");
  sub->add_flag("--report", o->report,
                "Also print every measurement's prediction before and after (with --held-out: every draw and what it moved)");
  sub->add_flag("--json", o->json, "Print the profile JSON instead of the text summary");
  sub->add_option("--held-out", o->held_out,
                  "Check calibration on a validation CSV: per group, fit on --fit-rows rows drawn at random, predict the rest");
  sub->add_option("--group", o->group, "--held-out groups: model (default) or source")->capture_default_str();
  sub->add_option("--fit-rows", o->fit_rows, "--held-out: rows fitted on per draw")->capture_default_str();
  sub->add_option("--draws", o->draws, "--held-out: draws per group")->capture_default_str();
  sub->add_option("--seed", o->seed, "--held-out: seed of the first draw")->capture_default_str();
  commands.add(sub, [o, sub, &io = commands.output()]() {
    for (const char* option : {"--group", "--fit-rows", "--draws", "--seed"}) require_prerequisite(*sub, option, "--held-out");
    for (const char* option : {"--runs", "--log", "--nccl", "--gemm", "--attention", "--kernels", "--probe", "--gpu", "--model", "--cluster", "--plan",
                               "--megatron-args", "--torchtitan-config", "--output", "--json"})
      require_apart(*sub, "--held-out", option);
    if (!o->held_out.empty()) {
      io.print("{}", held_out_report(*o));
      return 0;
    }
    const CalibrationData data = read_calibration_inputs(o->inputs);
    const CalibrationProfile profile = calibrate(data);
    const ProfileInputs summary = inputs_summary(data, o->inputs, profile);
    const nlohmann::json document = profile_to_json(profile, summary);
    if (!o->output.empty()) write_profile(o->output, document);
    if (o->json) {
      io.print("{}\n", json_fields::to_text(document, 2));
      return 0;
    }
    io.print("{}", calibration_text(profile, summary, o->report));
    if (!o->output.empty())
      io.print("profile written to {} (apply it with --profile {})\n", o->output, o->output);
    return 0;
  });
}

}  // namespace tessera::cli
