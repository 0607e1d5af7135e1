// A `tessera probe` folder (README "tessera probe") and the single sweep files of `calibrate
// --gemm / --attention / --kernels`, turned into calibration measurements. The folder is read
// whole: environment.json and ranks.csv first (the run's world, checked rank by rank), then every
// measurement file environment.json lists; a listed file that is missing is an error naming it.
#pragma once

#include <string>
#include <vector>

#include "calibrate/measurement.h"
#include "formats/attention_sweep.h"
#include "formats/collective_sweep.h"
#include "formats/gemm_sweep.h"
#include "formats/kernel_sweep.h"

namespace tessera {

// The measurement kind of a collective as nccl-tests and the probe name it.
CollectiveKind measured_collective_kind(NcclCollective c);

// Measurement ids are "<origin>:<line>" (attention rows add ".fwd" and ".fwd_bwd").
void add_gemm_rows(const std::vector<GemmSweepRow>& rows, const GpuSpec& gpu, const std::string& origin, CalibrationData& data);
// Each row gives two measurements: the forward and the forward + backward.
void add_attention_rows(const std::vector<AttentionSweepRow>& rows, const GpuSpec& gpu, const std::string& origin,
                        CalibrationData& data);
void add_kernel_rows(const std::vector<KernelSweepRow>& rows, const GpuSpec& gpu, const std::string& origin,
                     CalibrationData& data);
void add_collective_rows(const std::vector<CollectiveSweepRow>& rows, const GpuSpec& gpu, const std::string& origin,
                         CalibrationData& data);

// What a probe folder measured, and on which catalog GPU.
struct ProbeMeasurements {
  CalibrationData data;
  std::string gpu_key;       // the catalog GPU its measurements are fitted as
  std::string device_name;   // what the probe saw ("NVIDIA H200"; "cpu")
  std::size_t out_of_memory_steps = 0;  // steps_memory.csv rows that ran out of memory (no time)
};

// Measurements in one folder, all tables together (an attention row counts twice): a probe writes a
// few hundred; at this limit calibrate --probe takes seconds (README "Rules every input follows").
inline constexpr std::size_t kMaxProbeMeasurements = 10'000;

// `gpu` (the --gpu option) names the catalog GPU; empty = the one the probe's device name finds
// (Error("--gpu") when it finds none, and always for a probe run on CPU).
ProbeMeasurements read_probe_folder(const std::string& folder, const std::string& gpu);

}  // namespace tessera
