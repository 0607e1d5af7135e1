#include "evaluation/calibration_inputs.h"

#include <functional>
#include <set>
#include <sstream>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "catalog/published_runs.h"
#include "core/error.h"
#include "evaluation/calibration_runs.h"
#include "evaluation/probe_inputs.h"
#include "export/torchtitan_rules.h"
#include "formats/csv_table.h"
#include "formats/json_fields.h"
#include "formats/log_plan.h"
#include "formats/megatron_args.h"
#include "formats/nccl_tests.h"
#include "formats/plan_text.h"
#include "formats/training_log.h"

namespace tessera {

namespace {

constexpr double kMicrosecondsPerSecond = 1e6;

const GpuSpec& input_gpu(const CalibrationInputs& in, const std::string& option) {
  if (in.gpu.empty())
    throw Error("--gpu", "needed for " + option + " (the file does not say which catalog GPU ran it)",
                "a GPU key or alias from `tessera gpus`, e.g. --gpu h100");
  return find_gpu(in.gpu);
}

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// The plan given on the command line for the logs, if any, and the option that gave it.
struct GivenPlan {
  PlanRequest request;
  std::string option;
};
std::optional<GivenPlan> given_plan(const CalibrationInputs& in, const ModelSpec& model, const Cluster& cluster) {
  const int sources = !in.plan.empty() + !in.megatron_args.empty() + !in.torchtitan_config.empty();
  if (sources > 1)
    throw Error(!in.plan.empty() ? "--plan" : "--megatron-args", "given with another plan option",
                "one of --plan, --megatron-args, --torchtitan-config");
  if (!in.plan.empty()) return GivenPlan{load_plan(in.plan, model, cluster), "--plan"};
  if (!in.megatron_args.empty())
    return GivenPlan{plan_from_megatron_args(split_words(in.megatron_args), model, cluster), "--megatron-args"};
  if (!in.torchtitan_config.empty()) {
    const std::string recipe = json_fields::read_text_file(in.torchtitan_config, "--torchtitan-config");
    return GivenPlan{plan_from_torchtitan_job(parse_torchtitan_job(recipe, ""), model, cluster), "--torchtitan-config"};
  }
  return std::nullopt;
}

Cluster log_cluster(const CalibrationInputs& in, const TrainingLog& log) {
  if (!in.cluster.empty()) return load_cluster(in.cluster);
  const std::int64_t gpus = log_world_size(log);
  if (gpus <= 0)
    throw Error("--cluster", "log " + log.file + " does not say how many GPUs ran it", "--cluster GPU:COUNT");
  return make_cluster(input_gpu(in, "--log"), gpus);
}

RunMeasurement run_from_log(const CalibrationInputs& in, const std::string& file, const std::string& text) {
  TrainingLog log = parse_training_log(text, file);
  const bool megatron = log.format == "megatron-lm";
  const ModelSpec model = !in.model.empty() ? load_model(in.model)
                          : megatron        ? model_from_megatron_log(log, file)
                                            : throw Error("--model", "needed for torchtitan log " + file,
                                                          "a built-in model, HF config.json or model JSON");
  if (!in.model.empty()) check_log_matches_model(log, model);
  const Cluster cluster = log_cluster(in, log);
  const std::optional<GivenPlan> given = given_plan(in, model, cluster);
  PlanRequest request;
  if (given) {
    check_log_matches_plan(log, given->request.plan, given->request.workload, given->option);
    request = given->request;
  } else if (megatron && !log.arguments.empty()) {
    request = plan_from_megatron_log(log, model, cluster);
    // The dump against itself: data_parallel_size and the iteration lines' batch against the plan
    // its world_size and parallel sizes give (a garbled dump must not fit the wrong shape).
    check_log_matches_plan(log, request.plan, request.workload,
                           in.cluster.empty() ? "its world_size and parallel sizes" : "--cluster with its parallel sizes");
  } else {
    throw Error("--plan", "log " + file + " has no launch arguments to read the plan from",
                "--plan, --megatron-args or --torchtitan-config");
  }
  if (!megatron) {  // torchtitan logs tokens/s; the plan says how many tokens a step holds
    const LogRunShape shape{request.workload.global_batch * request.workload.seq_len, cluster.gpus()};
    log = parse_training_log(text, file, shape);
  }
  RunMeasurement run;
  run.id = file;
  run.model = model;
  run.gpu = cluster.gpu;
  run.shape = {cluster.gpus(), cluster.gpus_per_node, 0};
  run.plan = request.plan;
  run.workload = request.workload;
  run.iteration_time_s = log.steady_iteration_time_s();
  run.peak_memory_gib = log.peak_memory_gib;
  return run;
}

void add_nccl(const CalibrationInputs& in, const std::string& argument, CalibrationData& data) {
  const auto [file, shape] = split_nccl_argument(argument);
  const NcclTestsRun run = parse_nccl_tests(json_fields::read_text_file(file, "--nccl"), file, shape);
  const GpuSpec& gpu = input_gpu(in, "--nccl");
  if (run.nodes <= 0 || run.ranks % run.nodes != 0)
    throw Error("--nccl " + argument, std::to_string(run.ranks) + " ranks on " + std::to_string(run.nodes) + " nodes",
                "the same number of GPUs on every node (FILE@NODESxGPUS)");
  std::vector<CollectiveSweepRow> rows;
  for (const NcclTestsRow& row : run.rows)
    rows.push_back({row.line, run.collective, row.size_bytes, run.ranks, run.nodes, run.ranks / run.nodes,
                    row.time_us / kMicrosecondsPerSecond});
  add_collective_rows(rows, gpu, file, data);
}

void add_sweeps(const CalibrationInputs& in, CalibrationData& data) {
  if (!in.gemm_file.empty())
    add_gemm_rows(parse_gemm_sweep(json_fields::read_text_file(in.gemm_file, "--gemm"), in.gemm_file),
                  input_gpu(in, "--gemm"), in.gemm_file, data);
  if (!in.attention_file.empty())
    add_attention_rows(parse_attention_sweep(json_fields::read_text_file(in.attention_file, "--attention"), in.attention_file),
                       input_gpu(in, "--attention"), in.attention_file, data);
  if (!in.kernels_file.empty())
    add_kernel_rows(parse_kernel_sweep(json_fields::read_text_file(in.kernels_file, "--kernels"), in.kernels_file),
                    input_gpu(in, "--kernels"), in.kernels_file, data);
}

void add_probe(const CalibrationInputs& in, CalibrationData& data) {
  ProbeMeasurements probe = read_probe_folder(in.probe_folder, in.gpu);
  auto append = [](auto& to, auto& from) { to.insert(to.end(), from.begin(), from.end()); };
  append(data.runs, probe.data.runs);
  append(data.collectives, probe.data.collectives);
  append(data.gemms, probe.data.gemms);
  append(data.attention, probe.data.attention);
  append(data.kernels, probe.data.kernels);
}

// A file given twice, or two files with the same text, would be fitted twice (each run counted as
// two independent measurements). Texts are compared by size and hash (a log may be large).
struct SeenFile {
  std::string file;
  std::size_t size = 0, hash = 0;
};
void require_distinct(const std::string& file, const std::string& text, std::vector<SeenFile>& seen,
                      const std::string& option) {
  const SeenFile now{file, text.size(), std::hash<std::string>{}(text)};
  for (const SeenFile& earlier : seen)
    if (earlier.file == file || (earlier.size == now.size && earlier.hash == now.hash))
      throw Error(option, "'" + file + "' " + (earlier.file == file ? "given twice" : "holds the same text as '" + earlier.file + "'"),
                  "each measurement once (its runs count once)");
  seen.push_back(now);
}

}  // namespace

CalibrationData read_calibration_inputs(const CalibrationInputs& inputs) {
  CalibrationData data;
  if (!inputs.gpu.empty()) (void)find_gpu(inputs.gpu);  // a misspelt --gpu is an error even when unused
  std::vector<SeenFile> runs_seen, logs_seen;
  for (const auto& file : inputs.runs_files) {
    const auto [name, text] = load_published_runs_text(file, "--runs");
    require_distinct(file, text, runs_seen, "--runs");
    const CsvTable table = parse_csv(text, name);
    for (auto& run : runs_from_table(table, name)) data.runs.push_back(std::move(run));
  }
  for (const auto& file : inputs.log_files) {
    const std::string text = json_fields::read_text_file(file, "--log", kMaxLogFileBytes);
    require_distinct(file, text, logs_seen, "--log");
    data.runs.push_back(run_from_log(inputs, file, text));
  }
  std::set<std::string> nccl_seen;
  for (const auto& argument : inputs.nccl_arguments)
    if (!nccl_seen.insert(argument).second)
      throw Error("--nccl", "'" + argument + "' given twice", "each measurement once (its rows count once)");
  for (const auto& argument : inputs.nccl_arguments) add_nccl(inputs, argument, data);
  add_sweeps(inputs, data);
  if (!inputs.probe_folder.empty()) add_probe(inputs, data);
  if (data.empty())
    throw Error("calibrate", "no measurements given",
                "--runs FILE.csv, --log FILE, --nccl FILE, --gemm FILE, --attention FILE, --kernels FILE, --probe DIR");
  return data;
}

}  // namespace tessera
