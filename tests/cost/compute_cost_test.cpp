// Kernel times: a GEMM never beats the tensor-core peak nor the HBM roofline, its efficiency
// never drops when a dimension grows, and memory-bound kernels stream at bandwidth x efficiency.
#include "cost/compute_cost.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include "common/relative_error.h"

#include "catalog/gpu_catalog.h"

namespace tessera {
namespace {

using testing::rel_err;

const double kDims[] = {1, 7, 16, 64, 100, 128, 512, 1000, 4096, 12288, 49152, 131072};

TEST(ComputeCost, GemmNeverFasterThanPeak) {
  for (const auto& gpu : gpu_catalog()) {
    for (bool fp8 : {false, true}) {
      if (fp8 && gpu.fp8_tflops <= 0) continue;
      for (double m : kDims)
        for (double n : kDims)
          for (double k : kDims) {
            const double t = gemm_time_s(m, n, k, 1.0, gpu, fp8);
            EXPECT_GE(t, 2.0 * m * n * k / gpu.peak_flops(fp8)) << gpu.key << " " << m << "x" << n << "x" << k;
            // Roofline: the operands (A, B in the input format, C in 16-bit) cross HBM at least once.
            const double in_bytes = fp8 ? 1.0 : 2.0;
            const double bytes = in_bytes * (m * k + k * n) + 2.0 * m * n;
            EXPECT_GE(t, bytes / (gpu.hbm_tbps * 1e12)) << gpu.key;
          }
    }
  }
}

TEST(ComputeCost, EfficiencyIsAFractionBelowTheGpuMaximum) {
  for (const auto& gpu : gpu_catalog())
    for (double m : kDims)
      for (double n : kDims) {
        const double e = gemm_efficiency(m, n, 4096, gpu, false);
        EXPECT_GT(e, 0.0);
        EXPECT_LE(e, gpu.gemm_efficiency);
        EXPECT_LE(e, 1.0);
      }
}

TEST(ComputeCost, EfficiencyMonotoneInEachDimension) {
  const GpuSpec& gpu = find_gpu("h100-sxm-80gb");
  for (double a : kDims)
    for (double b : kDims)
      for (std::size_t i = 0; i + 1 < std::size(kDims); ++i) {
        const double lo = kDims[i], hi = kDims[i + 1];
        EXPECT_GE(gemm_efficiency(hi, a, b, gpu, false), gemm_efficiency(lo, a, b, gpu, false));
        EXPECT_GE(gemm_efficiency(a, hi, b, gpu, false), gemm_efficiency(a, lo, b, gpu, false));
        EXPECT_GE(gemm_efficiency(a, b, hi, gpu, false), gemm_efficiency(a, b, lo, gpu, false));
      }
}

TEST(ComputeCost, GemmTimeMonotoneInEachDimension) {
  const GpuSpec& gpu = find_gpu("a100-sxm-80gb");
  for (double a : kDims)
    for (double b : kDims)
      for (std::size_t i = 0; i + 1 < std::size(kDims); ++i) {
        const double lo = kDims[i], hi = kDims[i + 1];
        EXPECT_GE(gemm_time_s(hi, a, b, 1, gpu, false), gemm_time_s(lo, a, b, 1, gpu, false));
        EXPECT_GE(gemm_time_s(a, hi, b, 1, gpu, false), gemm_time_s(a, lo, b, 1, gpu, false));
        EXPECT_GE(gemm_time_s(a, b, hi, 1, gpu, false), gemm_time_s(a, b, lo, 1, gpu, false));
      }
}

// Very large GEMMs approach the GPU's best sustained matmul rate (the curve's asymptote).
TEST(ComputeCost, LargeGemmApproachesSustainedPeak) {
  const GpuSpec& gpu = find_gpu("h100-sxm-80gb");
  const double m = 1048576, n = 1048576, k = 1048576;
  const double ideal = 2.0 * m * n * k / (gpu.peak_flops(false) * gpu.gemm_efficiency);
  const double t = gemm_time_s(m, n, k, 1, gpu, false);
  EXPECT_GE(t, ideal);
  EXPECT_LT(t, ideal * 1.01);
}

TEST(ComputeCost, CountMultipliesTime) {
  const GpuSpec& gpu = find_gpu("h100-sxm-80gb");
  const double one = gemm_time_s(4096, 1024, 8192, 1, gpu, false);
  EXPECT_LT(rel_err(gemm_time_s(4096, 1024, 8192, 6, gpu, false), 6.0 * one), 1e-12);
  EXPECT_EQ(gemm_time_s(0, 1024, 8192, 1, gpu, false), 0.0);
  EXPECT_EQ(gemm_time_s(4096, 1024, 8192, 0, gpu, false), 0.0);
}

TEST(ComputeCost, Fp8GemmNoSlowerForLargeShapes) {
  const GpuSpec& gpu = find_gpu("h100-sxm-80gb");
  EXPECT_LT(gemm_time_s(16384, 16384, 16384, 1, gpu, true), gemm_time_s(16384, 16384, 16384, 1, gpu, false));
}

TEST(ComputeCost, MemoryBoundTimeIsBytesOverEffectiveBandwidth) {
  for (const auto& gpu : gpu_catalog()) {
    for (double bytes : {1.0, 1e6, 3.3e9, 8e10}) {
      const double want = bytes / (gpu.hbm_tbps * 1e12 * gpu.hbm_efficiency);
      EXPECT_LT(rel_err(memory_bound_time_s(bytes, gpu), want), 1e-12) << gpu.key;
    }
    EXPECT_EQ(memory_bound_time_s(0.0, gpu), 0.0);
  }
}

TEST(ComputeCost, AttentionNeverFasterThanPeak) {
  for (const auto& gpu : gpu_catalog())
    for (double flops : {1e6, 1e12, 5e15})
      for (const AttentionCall call : {AttentionCall{1, 128}, AttentionCall{16, 4096}, AttentionCall{512, 131072}}) {
        EXPECT_GE(attention_time_s(flops, call, gpu), flops / gpu.peak_flops(false));
        EXPECT_GE(attention_time_s(flops, call, gpu), flops / (gpu.peak_flops(false) * gpu.attention_efficiency));
      }
}

// The three saturations: each halves the efficiency at its half value, and a GPU without them
// (half values 0) runs every call at attention_efficiency.
TEST(ComputeCost, AttentionEfficiencyHalvesAtEachHalfValue) {
  const GpuSpec h100 = find_gpu("h100-sxm-80gb");
  GpuSpec g = h100;
  g.attention_half_tiles = g.attention_half_head_dim = 0;
  EXPECT_NEAR(attention_efficiency({4, g.attention_half_seq}, g), g.attention_efficiency / 2.0, 1e-12);
  g = h100;
  g.attention_half_seq = g.attention_half_head_dim = 0;
  const double seq = 4096;
  const double batch_heads = g.attention_half_tiles * kAttentionQueryTileRows / seq;
  EXPECT_NEAR(attention_efficiency({batch_heads, seq}, g), g.attention_efficiency / 2.0, 1e-12);
  g = h100;
  g.attention_half_seq = g.attention_half_tiles = 0;
  EXPECT_NEAR(attention_efficiency({1, 16, g.attention_half_head_dim}, g), g.attention_efficiency / 2.0, 1e-12);
  g.attention_half_head_dim = 0;
  EXPECT_EQ(attention_efficiency({1, 16, 64}, g), g.attention_efficiency);
  // More keys per tile and more tiles per call never lower the efficiency.
  const GpuSpec h = find_gpu("h200");
  EXPECT_LT(attention_efficiency({16, 4096}, h), attention_efficiency({16, 16384}, h));
  EXPECT_LT(attention_efficiency({16, 4096}, h), attention_efficiency({128, 4096}, h));
}

// kernel_overhead_s is a fixed cost per kernel: changing it by delta moves `count` GEMMs (or one
// attention kernel) by exactly count x delta, and a memory-bound kernel not at all.
TEST(ComputeCost, KernelOverheadAddsCountTimesItsChange) {
  const GpuSpec base = find_gpu("h100-sxm-80gb");
  GpuSpec doubled = base;
  doubled.kernel_overhead_s = 2.0 * base.kernel_overhead_s;
  const double delta = base.kernel_overhead_s;
  for (double count : {1.0, 3.0, 64.0}) {
    const double tiny = gemm_time_s(16, 16, 16, count, base, false);
    EXPECT_NEAR(gemm_time_s(16, 16, 16, count, doubled, false) - tiny, count * delta, 1e-12 * count);
    // A tiny GEMM is almost all overhead, a large one almost none: the change is the same.
    const double large = gemm_time_s(8192, 8192, 8192, count, base, false);
    EXPECT_NEAR(gemm_time_s(8192, 8192, 8192, count, doubled, false) - large, count * delta, 1e-9 * large);
  }
  const AttentionCall call{32, 4096};
  EXPECT_NEAR(attention_time_s(1e9, call, doubled) - attention_time_s(1e9, call, base), delta, 1e-15);
  EXPECT_EQ(memory_bound_time_s(1e9, doubled), memory_bound_time_s(1e9, base));
  EXPECT_EQ(gemm_efficiency(512, 512, 512, doubled, false), gemm_efficiency(512, 512, 512, base, false));
}

}  // namespace
}  // namespace tessera
