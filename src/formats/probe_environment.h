// The probe folder's description of itself (README "tessera probe"): environment.json (the
// machine, the run's world and the measurement files written) and ranks.csv (every process once).
// Parsing and the folder's own consistency only: the measurements are read by their sweep readers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

// The folder format this reader understands (environment.json "probe_format").
inline constexpr std::int64_t kProbeFormat = 1;
// The measurement files a probe may write, in the order a calibration reads them.
inline constexpr std::string_view kProbeFiles[] = {"gemm.csv",        "grouped_gemm.csv", "attention.csv", "kernels.csv",
                                                   "collectives.csv", "steps.csv",        "steps_memory.csv"};

struct ProbeEnvironment {
  std::string device;       // "cuda" or "cpu"
  std::string backend;      // "nccl" or "gloo"
  std::string device_name;  // torch's name of the device ("NVIDIA H200"; "cpu")
  std::int64_t world_size = 0, nodes = 0, gpus_per_node = 0;
  std::vector<std::string> files;  // measurement files written (each one of kProbeFiles; ranks.csv may be listed too)
  std::string torch_version;       // "" where the probe did not know it
};

// environment.json's text. Errors: Error("probe:<file>.<key>", what, allowed): a format other
// than kProbeFormat, a device other than cuda / cpu, world_size != nodes x gpus_per_node, a file
// name outside kProbeFiles or listed twice.
ProbeEnvironment parse_probe_environment(const std::string& json_text, const std::string& file);

// ranks.csv (rank,world_size,local_rank,node,hostname,device_name): every rank 0 .. world_size - 1
// once, each with the environment's world size. Errors: Error("ranks:<file>:<line>.<column>", ...).
void check_probe_ranks(std::string_view csv_text, const std::string& file, const ProbeEnvironment& environment);

}  // namespace tessera
