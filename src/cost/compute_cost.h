// Time of GPU kernels: GEMMs from FLOPs and a shape-dependent efficiency, fused attention from
// its FLOPs, memory-bound kernels from bytes and HBM bandwidth.
//
// GEMM efficiency curve: eff = gemm_efficiency(GPU) * prod over (m, n, k) of d / (d + d_half),
// d_half = the GPU's gemm_half_dim. A Hockney-style half-performance length (Hockney 1991,
// "r_inf and n_1/2"): very large GEMMs run at the GPU's sustained matmul rate, and each dimension
// loses throughput to wave and tile quantisation as it shrinks; bigger tiles and more SMs (Hopper's
// 128x256 wgmma tiles on 132 SMs) need bigger matrices to fill the GPU (NVIDIA, "Matrix
// Multiplication Background User's Guide", 2023). The GEMM is also bounded below by streaming its
// operands through HBM (roofline).
#pragma once

#include "hardware/gpu_spec.h"

namespace tessera {

// Fixed cost per kernel and host dispatch per operator are the GPU's refittable terms
// (GpuSpec::kernel_overhead_s, GpuSpec::host_op_dispatch_s; defaults and sources in
// hardware/gpu_spec.h). Eager PyTorch's dispatch makes a layer whose GPU work is shorter than its
// operators' dispatch host-bound. A Megatron GPT layer forward issues ~40 operators; the autograd
// backward about twice as many.
inline constexpr double kHostOpsPerLayerForward = 40.0;
inline constexpr double kHostBackwardOverForward = 2.0;

// `count` identical GEMMs of (m x k) * (k x n).
double gemm_time_s(double m, double n, double k, double count, const GpuSpec& gpu, bool fp8);
double gemm_efficiency(double m, double n, double k, const GpuSpec& gpu, bool fp8);
double attention_time_s(double flops, const GpuSpec& gpu);
double memory_bound_time_s(double bytes, const GpuSpec& gpu);

}  // namespace tessera
