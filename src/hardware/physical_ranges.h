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
// GPUs in one node (NVLink domain): 1 .. 1024, above NVL576.
inline constexpr int kMaxGpusPerNode = 1024;

}  // namespace tessera::physical
