// A GEMM sweep measured on the user's GPU, for `tessera calibrate --gemm` and the probe's
// gemm.csv / grouped_gemm.csv (README "tessera probe"). No standard format exists; tessera
// defines this CSV (the sweep rules of formats/sweep_table.h):
//
//   m,n,k,dtype,tflops[,time_ms][,groups]
//   4096,4096,4096,bf16,612.3
//
// - m, n, k: positive whole numbers (the GEMM is m x k times k x n). dtype: bf16, fp16 or fp8 (the
//   input type; the tensor-core rate is the same for bf16 and fp16). tflops: a positive number,
//   2 groups m n k / time / 1e12.
// - groups (optional; a file without it has 1 per row): a grouped GEMM of that many problems of
//   m x k times k x n in one kernel (MoE experts, m tokens per local expert).
// - time_ms (optional): the time per product; where given it must be positive and agree with
//   tflops to 1% beyond the rounding of the printed digits.
// Errors: Error("gemm:<file>:<line>.<column>", what, allowed), line and column 1-based.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct GemmSweepRow {
  std::size_t line = 0;  // 1-based line in the file
  double m = 0, n = 0, k = 0;
  double groups = 1;
  bool fp8 = false;  // dtype fp8; bf16 and fp16 are both false
  double tflops = 0;
};

std::vector<GemmSweepRow> parse_gemm_sweep(std::string_view csv_text, const std::string& file);

}  // namespace tessera
