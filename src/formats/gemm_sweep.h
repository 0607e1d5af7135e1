// A GEMM sweep measured on the user's GPU, for `tessera calibrate --gemm`: one row per shape with
// its achieved TFLOP/s. No standard format exists; tessera defines this CSV:
//
//   m,n,k,dtype,tflops
//   4096,4096,4096,bf16,612.3
//
// - The header row is required and names the columns; they may come in any order. Columns other
//   than the five are allowed and ignored (sweep scripts add time_ms, iterations, ...); each name
//   appears once.
// - m, n, k: positive whole numbers (the GEMM is m x k times k x n). dtype: bf16, fp16 or fp8 (the
//   input type; the tensor-core rate is the same for bf16 and fp16). tflops: a positive number,
//   2mnk / time / 1e12.
// - Blank lines and lines starting with '#' (a source or a note) are skipped. Fields are split at
//   commas and trimmed; quoted fields are not accepted (no value here needs one).
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
  bool fp8 = false;  // dtype fp8; bf16 and fp16 are both false
  double tflops = 0;
};

std::vector<GemmSweepRow> parse_gemm_sweep(std::string_view csv_text, const std::string& file);

}  // namespace tessera
