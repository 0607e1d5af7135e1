#include "formats/gemm_sweep.h"

#include <cmath>

#include "formats/sweep_table.h"

namespace tessera {

namespace {

// Shapes of one sweep: a grid of 16 sizes per dimension (m, n, k) in two dtypes is 8,192; 10,000 shapes
// are read and fitted in about a second (README "Limits").
constexpr std::size_t kMaxGemmRows = 10'000;

GemmSweepRow gemm_row(const SweepRow& r) {
  GemmSweepRow row;
  row.line = r.line();
  row.m = r.whole("m");
  row.n = r.whole("n");
  row.k = r.whole("k");
  row.fp8 = r.choice("dtype", {"bf16", "fp16", "fp8"}) == "fp8";
  row.tflops = r.positive("tflops");
  if (r.cell("groups")) row.groups = r.whole("groups");
  if (r.cell("time_ms")) {
    const double time_s = r.positive("time_ms") * 1e-3;
    const double tflops = 2.0 * row.groups * row.m * row.n * row.k / time_s / 1e12;
    const double slack = kArithmeticTolerance + r.printed_rounding("time_ms") + r.printed_rounding("tflops");
    if (std::abs(tflops / row.tflops - 1.0) > slack)
      r.fail("tflops", "tflops " + std::string(r.text("tflops")) + " disagrees with 2 m n k / time = " +
                           std::to_string(tflops),
             "the row's own arithmetic (groups x 2mnk / time_ms / 1e9)");
  }
  return row;
}

}  // namespace

std::vector<GemmSweepRow> parse_gemm_sweep(std::string_view csv_text, const std::string& file) {
  const SweepTable table(csv_text, "gemm", file, {"m", "n", "k", "dtype", "tflops"}, {"groups", "time_ms"}, kMaxGemmRows);
  std::vector<GemmSweepRow> rows;
  for (std::size_t i = 0; i < table.size(); ++i) rows.push_back(gemm_row(table.row(i)));
  return rows;
}

}  // namespace tessera
