// GpuSpec: one accelerator type's published figures plus the physical efficiency constants the
// cost model needs. Figures come from data/gpus.json, each with its source there, or from a
// user's GPU file (formats/gpu_json.h, README "GPU file").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "hardware/host_spec.h"
#include "hardware/measured_gemm.h"

namespace tessera {

// Defaults of the refittable terms (GpuSpec below).
// Fixed cost per kernel: launch latency plus tail of a partly filled last wave, ~4-5 us on
// A100/H100 (NVIDIA Nsight Systems traces of back-to-back PyTorch kernels; CUDA launch latency).
inline constexpr double kDefaultKernelOverheadS = 4.5e-6;
// Host-side dispatch: eager PyTorch spends ~15-25 us of CPU per operator (dispatcher, autograd
// recording, Python) (Ansel et al. 2024, "PyTorch 2", section 1 on eager overhead; vTrain, Bang
// et al. MICRO'24, section 3 on CPU-bound small micro-batches).
inline constexpr double kDefaultHostOpDispatchS = 20e-6;
// Link latencies per NCCL ring step: NVLink ~ a few us and InfiniBand ~ 5-10 us per hop
// including NCCL protocol overhead (nccl-tests small-message all-reduce latency on DGX systems).
inline constexpr double kDefaultNvlinkLatencyS = 5e-6;
inline constexpr double kDefaultNetworkLatencyS = 10e-6;
// All-to-all runs at the tier's NCCL bus bandwidth until a profile measures otherwise
// (alltoall_perf), and MoE routing kernels at the model's memory-bound rate until training
// runs of MoE models are fitted.
inline constexpr double kDefaultAllToAllEfficiency = 1.0;
inline constexpr double kDefaultMoeDispatchEfficiency = 1.0;
// How the host's dispatch and the GPU's work of one layer combine: (gpu^p + host^p)^(1/p), a
// smooth maximum. A layer's operators differ in length, so near the crossover some already wait
// on the host while others still keep the GPU busy: measured times bend smoothly from host-bound
// to GPU-bound instead of following max(gpu, host) (p = infinity); p = 1 would be no overlap at all.
// Fitted once on ../shared/validation/vtrain_runs.csv (1,440 runs of small GPT models on A100
// whose micro-batch sweeps cross from host- to GPU-bound; see docs/ARCHITECTURE.md, "Calibration").
inline constexpr double kDefaultHostOverlapExponent = 3.0;

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
  // Fused attention's shape saturations (cost/compute_cost.h AttentionCall); 0 = none measured.
  double attention_half_seq = 0;    // keys per query tile at which that alone halves efficiency
  double attention_half_tiles = 0;  // query tiles per call at which that alone halves efficiency
  double attention_half_head_dim = 0;  // head width at which that alone halves efficiency
  double hbm_efficiency = 0;        // sustained fraction of HBM bandwidth for streaming kernels
  double nvlink_efficiency = 0;     // NCCL bus bandwidth over one-direction link bandwidth
  double network_efficiency = 0;    // NCCL bus bandwidth over NIC line rate
  double usable_memory_gib = 0;     // what the framework can allocate (driver + context reserved)
  // Terms a calibration profile may refit (calibrate/, README "Calibration"); the defaults are
  // the cost model's shared constants, sourced where they are defined (kDefault... below).
  double kernel_overhead_s = kDefaultKernelOverheadS;      // launch + partial last wave per kernel
  double host_op_dispatch_s = kDefaultHostOpDispatchS;    // CPU time per eager operator dispatch
  double nvlink_latency_s = kDefaultNvlinkLatencyS;       // per NCCL ring step inside a node
  double network_latency_s = kDefaultNetworkLatencyS;     // per NCCL ring step across nodes
  double all_to_all_efficiency = kDefaultAllToAllEfficiency;  // all-to-all bus bandwidth / the tier's ring bus bandwidth
  double moe_dispatch_efficiency = kDefaultMoeDispatchEfficiency;  // speed of MoE routing / permute kernels relative to the model
  double host_overlap_exponent = kDefaultHostOverlapExponent;  // p of the host / GPU smooth maximum
  double memory_reserve_gib = 0;    // measured peak memory beyond the model's reserve (may be < 0)
  HostSpec host;                    // the node this GPU ships in: host memory, PCIe, NVMe, CPU Adam
  // Dense GEMMs a calibration profile measured on this GPU (none in the catalog): shapes at or near
  // them are priced from the measurement, the rest from the curve (cost/measured_gemm_scale.h).
  std::vector<MeasuredGemm> measured_gemms;

  double peak_flops(bool fp8) const { return (fp8 ? fp8_tflops : bf16_tflops) * 1e12; }
  void validate() const;  // throws tessera::Error("gpu.<field>", ...)
  bool operator==(const GpuSpec&) const = default;
};

// The family of a GPU described in a user's file that names none: no published run has it, so
// its efficiency constants are the user's assumption.
inline constexpr std::string_view kCustomGpuFamily = "custom";
// The families whose runs the catalog's constants were fitted on (data/gpus.json), and custom.
// volta (V100) and ga102 (the RTX A6000's Ampere die, not the A100's GA100) take assumed values:
// no run on them is validated.
inline constexpr std::string_view kGpuFamilies[] = {"volta", "ampere", "ga102", "hopper", "blackwell", "cdna2", "cdna3", kCustomGpuFamily};

}  // namespace tessera
