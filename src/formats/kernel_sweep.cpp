#include "formats/kernel_sweep.h"

#include "formats/sweep_table.h"

namespace tessera {

namespace {
// Six ops x two passes x two implementations x a handful of sizes is ~100 rows.
constexpr std::size_t kMaxKernelRows = 10'000;

KernelSweepRow kernel_row(const SweepRow& r) {
  KernelSweepRow row;
  row.line = r.line();
  row.op = r.choice("op", {"copy", "rmsnorm", "rope", "swiglu", "residual_add", "cross_entropy", "dispatch"});
  row.impl = r.choice("impl", {"eager", "fused"});
  row.pass = r.choice("pass", {"fwd", "fwd_bwd"});
  row.tokens = r.whole("tokens");
  row.width = r.whole("width");
  row.kernels = r.whole("kernels");
  row.time_s = r.positive("time_ms") * 1e-3;
  if (row.host_dispatch()) {
    if (r.number("bytes") != 0) r.fail("bytes", "a dispatch row moves " + std::string(r.text("bytes")) + " bytes", "0");
  } else {
    row.bytes = r.positive("bytes");
  }
  return row;
}
}  // namespace

std::vector<KernelSweepRow> parse_kernel_sweep(std::string_view csv_text, const std::string& file) {
  const SweepTable table(csv_text, "kernels", file, {"op", "impl", "tokens", "width", "pass", "bytes", "kernels", "time_ms"},
                         {}, kMaxKernelRows);
  std::vector<KernelSweepRow> rows;
  for (std::size_t i = 0; i < table.size(); ++i) rows.push_back(kernel_row(table.row(i)));
  return rows;
}

}  // namespace tessera
