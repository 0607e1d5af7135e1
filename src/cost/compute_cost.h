// Time of GPU kernels: GEMMs from FLOPs and a shape-dependent efficiency, fused attention from
// its FLOPs, memory-bound kernels from bytes and HBM bandwidth.
//
// GEMM efficiency curve: eff = gemm_efficiency(GPU) * prod over (m, n, k) of d / (d + d_half),
// d_half = 64. A Hockney-style half-performance length (Hockney 1991, "r_inf and n_1/2"): large
// GEMMs run at the GPU's maximum achievable matmul rate, and each dimension below a few hundred
// loses tiles to wave and tile quantisation (NVIDIA, "Matrix Multiplication Background User's
// Guide", 2023). The GEMM is also bounded below by streaming its operands through HBM (roofline).
#pragma once

#include "hardware/gpu_spec.h"

namespace tessera {

// Dimension at which one GEMM dimension alone halves efficiency (see the header comment).
inline constexpr double kGemmHalfEfficiencyDim = 64.0;
// Fixed cost per kernel: launch latency plus tail of a partly filled last wave, ~4-5 us on
// A100/H100 (NVIDIA Nsight Systems traces of back-to-back PyTorch kernels; CUDA launch latency).
inline constexpr double kKernelOverheadS = 4.5e-6;

// `count` identical GEMMs of (m x k) * (k x n).
double gemm_time_s(double m, double n, double k, double count, const GpuSpec& gpu, bool fp8);
double gemm_efficiency(double m, double n, double k, const GpuSpec& gpu, bool fp8);
double attention_time_s(double flops, const GpuSpec& gpu);
double memory_bound_time_s(double bytes, const GpuSpec& gpu);

}  // namespace tessera
