#include "evaluation/probe_inputs.h"

#include <algorithm>
#include <filesystem>
#include <map>

#include "catalog/gpu_catalog.h"
#include "core/error.h"
#include "evaluation/calibration_runs.h"
#include "evaluation/memory_check.h"
#include "formats/csv_table.h"
#include "formats/json_fields.h"
#include "formats/probe_environment.h"

namespace tessera {

void add_gemm_rows(const std::vector<GemmSweepRow>& rows, const GpuSpec& gpu, const std::string& origin, CalibrationData& data) {
  for (const GemmSweepRow& row : rows)
    data.gemms.push_back({origin + ":" + std::to_string(row.line), gpu, row.m, row.n, row.k, row.fp8, row.tflops, row.groups});
}

void add_attention_rows(const std::vector<AttentionSweepRow>& rows, const GpuSpec& gpu, const std::string& origin,
                        CalibrationData& data) {
  for (const AttentionSweepRow& row : rows) {
    const std::string id = origin + ":" + std::to_string(row.line);
    data.attention.push_back({id + ".fwd", gpu, row.batch, row.heads, row.seq, row.head_dim, row.causal, false, row.fwd_s});
    data.attention.push_back({id + ".fwd_bwd", gpu, row.batch, row.heads, row.seq, row.head_dim, row.causal, true, row.fwd_bwd_s});
  }
}

void add_kernel_rows(const std::vector<KernelSweepRow>& rows, const GpuSpec& gpu, const std::string& origin,
                     CalibrationData& data) {
  for (const KernelSweepRow& row : rows)
    data.kernels.push_back({origin + ":" + std::to_string(row.line), gpu, row.bytes, row.kernels, row.host_dispatch(), row.time_s});
}

CollectiveKind measured_collective_kind(NcclCollective c) {
  switch (c) {
    case NcclCollective::all_reduce: return CollectiveKind::all_reduce;
    case NcclCollective::all_gather: return CollectiveKind::all_gather;
    case NcclCollective::reduce_scatter: return CollectiveKind::reduce_scatter;
    case NcclCollective::all_to_all: return CollectiveKind::all_to_all;
    case NcclCollective::send_recv: return CollectiveKind::send_recv;
  }
  return CollectiveKind::all_reduce;
}

void add_collective_rows(const std::vector<CollectiveSweepRow>& rows, const GpuSpec& gpu, const std::string& origin,
                         CalibrationData& data) {
  for (const CollectiveSweepRow& row : rows) {
    CollectiveMeasurement c;
    c.id = origin + ":" + std::to_string(row.line);
    c.gpu = gpu;
    c.kind = measured_collective_kind(row.kind);
    c.bytes = row.bytes;
    c.nodes = row.nodes;
    c.gpus_per_node = row.gpus_per_node;
    c.time_s = row.time_s;
    data.collectives.push_back(c);
  }
}

namespace {

// The catalog GPU a device name finds: the name without a vendor prefix, else its first word
// ("NVIDIA H100 80GB HBM3" -> "H100"); nullptr when neither is a catalog name or alias.
const GpuSpec* catalog_gpu_of(const std::string& device_name) {
  std::string name = device_name;
  for (const char* vendor : {"NVIDIA ", "AMD "})
    if (name.starts_with(vendor)) name = name.substr(std::string_view(vendor).size());
  for (const std::string& candidate : {name, name.substr(0, name.find(' '))}) {
    try {
      return &find_gpu(candidate);
    } catch (const Error&) {
    }
  }
  return nullptr;
}

const GpuSpec& probe_gpu(const ProbeEnvironment& env, const std::string& gpu) {
  if (!gpu.empty()) return find_gpu(gpu);
  const GpuSpec* found = env.device == "cuda" ? catalog_gpu_of(env.device_name) : nullptr;
  if (found == nullptr)
    throw Error("--gpu", "needed: the probe ran on '" + env.device_name + "'" +
                             (env.device == "cpu" ? " (a CPU run stands for no GPU by itself)" : ", which names no catalog GPU"),
                "a GPU key or alias from `tessera gpus`, e.g. --gpu h100");
  return *found;
}

std::string read_listed(const std::filesystem::path& folder, const std::string& name) {
  const std::filesystem::path path = folder / name;
  if (!std::filesystem::exists(path))
    throw Error("probe:" + path.string(), "missing: environment.json lists it", "the folder as the probe wrote it");
  return json_fields::read_text_file(path.string(), "probe:" + path.string());
}

// steps.csv with every row's gpu column set to the probe's catalog GPU (the probe writes the
// device's own name there), each run's peak from steps_memory.csv where it has one.
void add_steps(const std::filesystem::path& folder, const ProbeEnvironment& env, const GpuSpec& gpu, ProbeMeasurements& out) {
  const std::string file = (folder / "steps.csv").string();
  CsvTable table = parse_csv(read_listed(folder, "steps.csv"), "probe:" + file);
  const int gpu_column = table.column("gpu");
  if (gpu_column < 0) throw Error("probe:" + file, "no gpu column", "the validation schema (data/validation/README.md)");
  for (auto& row : table.rows) row[static_cast<std::size_t>(gpu_column)] = gpu.key;
  std::vector<RunMeasurement> runs = runs_from_table(table, file);
  std::map<std::string, MeasuredPeak> peaks;
  const bool has_memory = std::find(env.files.begin(), env.files.end(), "steps_memory.csv") != env.files.end();
  if (has_memory) {
    const std::string memory_file = (folder / "steps_memory.csv").string();
    const CsvTable memory = parse_csv(read_listed(folder, "steps_memory.csv"), "probe:" + memory_file);
    for (MeasuredPeak& peak : read_measured_peaks(memory)) {
      if (!peak.ran) ++out.out_of_memory_steps;
      peaks[peak.id] = std::move(peak);
    }
  }
  for (RunMeasurement& run : runs) {
    const std::string row_id = run.id.substr(run.id.rfind(':') + 1);
    // The allocator's reserved peak: the model's whole peak less the CUDA context outside it.
    if (const auto it = peaks.find(row_id); it != peaks.end() && it->second.reserved_gib > 0)
      run.peak_memory_gib = it->second.reserved_gib;
    out.data.runs.push_back(std::move(run));
  }
}

}  // namespace

ProbeMeasurements read_probe_folder(const std::string& folder_name, const std::string& gpu) {
  const std::filesystem::path folder(folder_name);
  if (!std::filesystem::is_directory(folder))
    throw Error("--probe", "'" + folder_name + "' is not a folder", "the folder `tessera probe --out` wrote");
  const std::string env_file = (folder / "environment.json").string();
  const ProbeEnvironment env = parse_probe_environment(json_fields::read_text_file(env_file, "probe:" + env_file), env_file);
  const std::string ranks_file = (folder / "ranks.csv").string();
  check_probe_ranks(json_fields::read_text_file(ranks_file, "probe:" + ranks_file), ranks_file, env);
  ProbeMeasurements out;
  const GpuSpec& spec = probe_gpu(env, gpu);
  out.gpu_key = spec.key;
  out.device_name = env.device_name;
  for (const std::string& name : env.files) {
    const std::string path = (folder / name).string();
    if (name == "steps_memory.csv") continue;  // read with steps.csv
    const std::string text = read_listed(folder, name);
    if (name == "gemm.csv" || name == "grouped_gemm.csv") add_gemm_rows(parse_gemm_sweep(text, path), spec, path, out.data);
    else if (name == "attention.csv") add_attention_rows(parse_attention_sweep(text, path), spec, path, out.data);
    else if (name == "kernels.csv") add_kernel_rows(parse_kernel_sweep(text, path), spec, path, out.data);
    else if (name == "collectives.csv") add_collective_rows(parse_collective_sweep(text, path), spec, path, out.data);
    else if (name == "steps.csv") add_steps(folder, env, spec, out);
  }
  const CalibrationData& d = out.data;
  const std::size_t count = d.runs.size() + d.collectives.size() + d.gemms.size() + d.attention.size() + d.kernels.size();
  if (count == 0)
    throw Error("probe:" + env_file + ".files", "lists no measurement file", "at least one of gemm.csv, attention.csv, ...");
  if (count > kMaxProbeMeasurements)
    throw Error("probe:" + folder_name, std::to_string(count) + " measurements in one folder",
                "at most " + std::to_string(kMaxProbeMeasurements) + " (attention rows count twice)");
  return out;
}

}  // namespace tessera
