// Physical bounds on hardware inputs (issue 13, D8). Each is generous, far outside any part sold,
// so no real GPU or network is refused; what they exclude is a unit slip or garbage such as
// "nvlink_gbps": 1e-308, which would otherwise reach the cost model and come out as an infinite or
// 1e301-second step, blamed on a field the user never wrote.
#pragma once

namespace tessera::physical {

// Link and memory bandwidth, GB/s (NIC rates in Gbit/s use the same bounds): 1 MB/s, slower than
// any interconnect in use, to 1 PB/s, ~500x NVLink 5's 1.8 TB/s per GPU.
inline constexpr double kMinBandwidthGbps = 1e-3;
inline constexpr double kMaxBandwidthGbps = 1e6;
// HBM bandwidth is given in TB/s: the same 1 MB/s .. 1 PB/s.
inline constexpr double kGbPerTb = 1e3;
inline constexpr double kMinHbmTbps = kMinBandwidthGbps / kGbPerTb;
inline constexpr double kMaxHbmTbps = kMaxBandwidthGbps / kGbPerTb;
// Dense tensor peak, TFLOP/s: 1 GFLOP/s (one CPU core) to 1 EFLOP/s, ~200x a B200's FP8 peak.
inline constexpr double kMinTflops = 1e-3;
inline constexpr double kMaxTflops = 1e6;
// Memory per GPU, GiB: 1 MiB to 100 TiB (~400x the largest HBM stack, 288 GB on B300).
inline constexpr double kMinMemoryGib = 1.0 / 1024.0;
inline constexpr double kMaxMemoryGib = 1e5;
// Sustained fractions of a peak: 0.1% .. 100%. No kernel the model prices sustains less than 0.1%
// of peak; a smaller figure is a percent typed as a fraction the wrong way round.
inline constexpr double kMinEfficiency = 1e-3;
inline constexpr double kMaxEfficiency = 1.0;
// GEMM dimension (elements) at which efficiency halves: 1 .. 1e5, above any hidden size in use.
inline constexpr double kMinGemmHalfDim = 1.0;
inline constexpr double kMaxGemmHalfDim = 1e5;
// Host memory per node, GiB: up to 1 PiB (~30x the largest shared-memory servers, 32 TiB), and
// local NVMe per node, TB: up to 10 PB (~300x a DGX H100's 30 TB of cache NVMe).
inline constexpr double kMaxHostMemoryGib = 1024.0 * 1024.0;
inline constexpr double kMaxNvmeTb = 10000.0;
// A node's CPU optimizer step, 10^9 parameters per second: 1 M/s (one slow core) to 10^12/s, ~1000x
// DeepSpeed CPU Adam on a two-socket server (~1-2 x 10^9/s, ZeRO-Offload Table 4 / research note).
inline constexpr double kMinCpuAdamGparamsPerS = 1e-3;
inline constexpr double kMaxCpuAdamGparamsPerS = 1e3;
// GPUs in one node (NVLink domain): 1 .. 1024, above NVL576.
inline constexpr int kMaxGpusPerNode = 1024;

// Fixed times of the refittable terms (GpuSpec kernel_overhead_s, host_op_dispatch_s,
// nvlink_latency_s, network_latency_s), seconds. Floor 1 ns, about one GPU clock: no kernel launch
// or link hop is faster, so a kernel overhead or latency of 0 (or a denormal) is a slip. Ceiling
// 1 ms: ~200x a CUDA launch and ~100x an InfiniBand hop; "5" meant as microseconds lands above.
// Host dispatch alone may be 0: a CUDA-graph-captured or compiled model issues no eager operators.
inline constexpr double kMinFixedTimeS = 1e-9;
inline constexpr double kMaxFixedTimeS = 1e-3;
// Relative speeds a profile fits against the model's own rate: all_to_all_efficiency (all-to-all
// bus bandwidth over the tier's ring bus bandwidth) and moe_dispatch_efficiency (routing and
// permutation kernels over the modelled memory-bound rate). Below 1/20 the modelled term is off
// by more than an order of magnitude, a broken setup to report, not a constant to fit. Above 1:
// an all-to-all over NVSwitch can beat a ring (sends to every peer at once), up to ~2x; fused
// permutation / routing kernels (DeepEP, Transformer Engine's fused router) skip passes the model
// counts, up to ~4x.
inline constexpr double kMinRelativeEfficiency = 0.05;
inline constexpr double kMaxAllToAllEfficiency = 2.0;
inline constexpr double kMaxMoeDispatchEfficiency = 4.0;
// memory_reserve_gib: a measured peak may sit below the model's, but by at most the part of the
// reserve that every plan carries, the CUDA context + cuBLAS / TE workspaces (0.5 + 4 x 32 MiB,
// cost/memory_model.h kCudaContextBytes + kWorkspaceBytes, static_assert there), so the reserve
// never goes negative. At most hbm_gib above it.
inline constexpr double kMaxNegativeReserveGib = 0.625;

// host_overlap_exponent: 1 is the sum (host and GPU never overlap); the top of the range, 64, is
// the plain max(gpu, host) (the smooth maximum is within 1.1%, 2^(1/64), of it there anyway).
inline constexpr double kMinHostOverlapExponent = 1.0;
inline constexpr double kMaxHostOverlapExponent = 64.0;

// Measured times (calibration inputs, validation rows). A training step runs hundreds of kernels,
// each at least a launch (~2-5 us, CUDA's launch latency): under 10 us is no step. Above 1e6 s
// (11.6 days) is no step either: a unit slip (ms as s) or garbage. A collective, an nccl-tests
// row, takes at least the 1 ns floor above and at most 1e4 s (nccl-tests' largest sizes finish in
// seconds).
inline constexpr double kMinStepTimeS = 1e-5;
inline constexpr double kMaxStepTimeS = 1e6;
inline constexpr double kMaxCollectiveTimeS = 1e4;

}  // namespace tessera::physical
