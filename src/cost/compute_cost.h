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

#include <cstdint>

#include "hardware/gpu_spec.h"

namespace tessera {

// Fixed cost per kernel and host dispatch per operator are the GPU's refittable terms
// (GpuSpec::kernel_overhead_s, GpuSpec::host_op_dispatch_s; defaults and sources in
// hardware/gpu_spec.h). Eager PyTorch's dispatch makes a layer whose GPU work is shorter than its
// operators' dispatch host-bound. A Megatron GPT layer forward issues ~40 operators; the autograd
// backward about twice as many.
inline constexpr double kHostOpsPerLayerForward = 40.0;
inline constexpr double kHostBackwardOverForward = 2.0;

// `count` identical GEMMs of (m x k) * (k x n): the curve below, scaled where the GPU has measured
// GEMMs near the shape (cost/measured_gemm_scale.h).
double gemm_time_s(double m, double n, double k, double count, const GpuSpec& gpu, bool fp8);
double gemm_efficiency(double m, double n, double k, const GpuSpec& gpu, bool fp8);
// One GEMM (m, n, k > 0) from the curve and the HBM roofline, plus the kernel overhead; no measured
// GEMM is consulted.
double curve_gemm_time_s(double m, double n, double k, const GpuSpec& gpu, bool fp8);
// One grouped GEMM (Megatron's --moe-grouped-gemm, Transformer Engine GroupedLinear; torch's
// _grouped_mm): `groups` problems of (m x k) * (k x n) in one kernel, whose tiles fill the SMs
// together, so the wave saturation sees all groups' rows (groups x m) and one launch is paid.
// Measured on one H200 (tests/cost/fixtures/h200/grouped_gemm.csv): at 1,024 rows per expert a
// grouped GEMM of 4 or 16 experts runs at 700-770 TFLOP/s, as fast as one dense GEMM of the same
// rows, where 16 separate GEMMs reach 220-660.
double grouped_gemm_time_s(double m, double n, double k, double groups, const GpuSpec& gpu, bool fp8);
// One fused attention kernel call: `batch_heads` (micro-batch x heads on this rank) independent
// attention problems of `seq` queries (and keys) each, of `head_dim` ((q/k + v widths) / 2). Its
// efficiency is the GPU's attention_efficiency times three saturations: the keys each query tile
// walks (s / (s + attention_half_seq): every tile's prologue, softmax rescaling and epilogue
// amortised over its key loop), the query tiles the call spreads over the SMs (tiles / (tiles +
// attention_half_tiles): waves and the causal mask's uneven tiles) and the head width
// (d / (d + attention_half_head_dim): the matmul work per byte of each tile). A GPU whose half
// values are 0 runs every call at attention_efficiency.
struct AttentionCall {
  double batch_heads = 0;
  double seq = 0;
  double head_dim = 128;
};
// Query rows per tile of fused attention kernels: FlashAttention-2 (Dao 2023, §3.3: blocks of
// {64, 128} rows, 128 for head dimension 128) and FlashAttention-3 on Hopper (Shah et al. 2024,
// arXiv 2407.08608 §3: 128-row Q blocks per warpgroup pair).
inline constexpr std::int64_t kAttentionQueryTileRows = 128;
double attention_efficiency(const AttentionCall& call, const GpuSpec& gpu);
// Forward + backward counted together by the caller: `flops` at this call's efficiency.
double attention_time_s(double flops, const AttentionCall& call, const GpuSpec& gpu);
double memory_bound_time_s(double bytes, const GpuSpec& gpu);
// Backward of a linear layer: input-gradient and weight-gradient GEMMs of the forward's shape.
inline constexpr double kGemmBackwardOverForward = 2.0;
// Flash-attention backward runs five matmuls against the forward's two (Dao 2023, FA2 §3.1.2).
inline constexpr double kFlashBackwardOverForward = 2.5;

// Work issued by the host and run by the GPU: the smooth maximum (gpu^p + host^p)^(1/p)
// (GpuSpec::host_overlap_exponent), written as hi (1 + (lo/hi)^p)^(1/p) so that large p cannot
// overflow; a host with nothing left to issue (host_s <= 0) leaves the GPU's time.
double host_bound_time_s(double gpu_s, double host_s, double exponent);

}  // namespace tessera
