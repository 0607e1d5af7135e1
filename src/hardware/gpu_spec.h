// GpuSpec: one accelerator type's published figures plus the physical efficiency constants the
// cost model needs. Figures come from data/gpus.json, each with its source there, or from a
// user's GPU file (io/gpu_json.h, README "GPU file").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct GpuSpec {
  std::string key;   // catalog key, e.g. "a100-sxm-80gb"
  std::string name;  // marketing name
  // Architecture family whose published runs fitted the efficiency constants ("ampere",
  // "hopper", ...); a GPU from a user's file is kCustomGpuFamily unless the file names one.
  std::string family;
  std::string source;                // where the figures come from (datasheet, file)
  std::vector<std::string> aliases;  // other names that find it ("h100"); unique over all GPUs
  double bf16_tflops = 0;  // dense 16-bit tensor peak (BF16 == FP16 on every catalog part)
  double fp8_tflops = 0;   // dense FP8 peak; 0 = not supported
  bool mxfp8 = false;      // block-scaled MXFP8 tensor cores (Blackwell)
  double hbm_gib = 0;
  double hbm_tbps = 0;             // HBM bandwidth, TB/s
  double nvlink_gbps = 0;          // intra-node bandwidth per GPU, GB/s, both directions summed
  int gpus_per_node = 8;           // default node size
  double network_gbps_per_gpu = 0; // scale-out NIC per GPU, Gbit/s, one direction
  // Physical efficiency constants, shared by every job on this GPU type (sources in gpus.json):
  double gemm_efficiency = 0;       // best sustained fraction of the 16-bit peak on large GEMMs
  double fp8_gemm_efficiency = 0;   // the same for FP8 GEMMs against the FP8 peak
  double gemm_half_dim = 0;         // GEMM dimension at which that dimension alone halves efficiency
  double attention_efficiency = 0;  // fused (flash) attention's sustained fraction of the peak
  double hbm_efficiency = 0;        // sustained fraction of HBM bandwidth for streaming kernels
  double nvlink_efficiency = 0;     // NCCL bus bandwidth over one-direction link bandwidth
  double network_efficiency = 0;    // NCCL bus bandwidth over NIC line rate
  double usable_memory_gib = 0;     // what the framework can allocate (driver + context reserved)

  double peak_flops(bool fp8) const { return (fp8 ? fp8_tflops : bf16_tflops) * 1e12; }
  void validate() const;  // throws tessera::Error("gpu.<field>", ...)
  bool operator==(const GpuSpec&) const = default;
};

// The family of a GPU described in a user's file that names none: no published run has it, so
// its efficiency constants are the user's assumption.
inline constexpr std::string_view kCustomGpuFamily = "custom";

}  // namespace tessera
