// Memory-bound kernel timings (the probe's kernels.csv, `tessera calibrate --kernels`; README
// "tessera probe"), in the sweep rules of formats/sweep_table.h:
//
//   op,impl,tokens,width,pass,bytes,kernels,time_ms
//
// One operation (`copy`, `rmsnorm`, `rope`, `swiglu`, `residual_add`, `cross_entropy`, or
// `dispatch`: host time per eager operator) at tokens x width elements, `pass` fwd or fwd_bwd,
// `impl` eager or fused; `bytes` read + written by all its kernels in the pass, `kernels` the
// kernels (host operators) it launches, `time_ms` the mean wall time per call. A `dispatch` row
// moves no bytes (0); every other row moves some.
// Errors: Error("kernels:<file>:<line>.<column>", what, allowed).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

struct KernelSweepRow {
  std::size_t line = 0;
  std::string op, impl, pass;
  double tokens = 0, width = 0;
  double bytes = 0, kernels = 0;
  double time_s = 0;
  bool host_dispatch() const { return op == "dispatch"; }
};

std::vector<KernelSweepRow> parse_kernel_sweep(std::string_view csv_text, const std::string& file);

}  // namespace tessera
