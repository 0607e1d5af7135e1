// What `tessera calibrate` reads, turned into CalibrationData: validation-schema CSVs (--runs),
// training logs (--log, with the run's model, cluster and plan from the log's own launch
// arguments or from --model / --cluster / --plan / --megatron-args / --torchtitan-config),
// nccl-tests outputs (--nccl FILE[@NODESxGPUS]), GEMM / attention / kernel sweeps (--gemm,
// --attention, --kernels) and a probe folder (--probe, evaluation/probe_inputs.h).
#pragma once

#include <string>
#include <vector>

#include "calibrate/measurement.h"

namespace tessera {

struct CalibrationInputs {
  std::vector<std::string> runs_files;
  std::vector<std::string> log_files;
  std::vector<std::string> nccl_arguments;  // FILE or FILE@NODESxGPUS
  std::string gemm_file;
  std::string attention_file, kernels_file;  // fused-attention and memory-bound kernel sweeps
  std::string probe_folder;                  // a `tessera probe` folder, read whole
  // The GPU of logs, nccl-tests outputs and GEMM sweeps (CSV rows name their own).
  std::string gpu;
  // The run of every --log, where its own launch arguments do not say (or to check them against).
  std::string model, cluster, plan, megatron_args, torchtitan_config;
};

// Throws Error naming the input (file and line) on anything it cannot read.
CalibrationData read_calibration_inputs(const CalibrationInputs& inputs);

}  // namespace tessera
