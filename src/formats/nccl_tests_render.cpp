// render_nccl_tests (formats/nccl_tests.h): a run as nccl-tests prints it, for fixtures and the
// reader's round-trip tests.
#include <algorithm>
#include <string>

#include <fmt/core.h>

#include "formats/nccl_tests.h"

namespace tessera {

namespace {

// nccl-tests' number formatting (util.cu getFloatStr): the most decimals (2, 1, 0) that fit the
// width, else exponent form.
std::string fit_number(double value, int width) {
  for (int decimals = 2; decimals >= 0; --decimals) {
    std::string text = fmt::format("{:{}.{}f}", value, width, decimals);
    if (static_cast<int>(text.size()) <= width) return text;
  }
  return fmt::format("{:{}.{}e}", value, width, width >= 7 ? 1 : 0);
}

}  // namespace

std::string render_nccl_tests(const NcclTestsRun& run) {
  std::string out = fmt::format("# Collective test starting: {}\n#\n# Using devices\n", nccl_tests_binary(run.collective));
  const std::int64_t nodes = std::max<std::int64_t>(run.nodes, 1);
  const std::int64_t per_node = (run.ranks + nodes - 1) / nodes;
  for (std::int64_t rank = 0; rank < run.ranks; ++rank)
    out += fmt::format("#  Rank {:2d} Group  0 Pid {:6d} on {:>10} device {:2d} [0x{:02x}] {}\n", rank, 1000 + rank,
                       "node" + std::to_string(rank / per_node), rank % per_node, rank % per_node, run.gpu_name);
  out += fmt::format("#\n# {:>10}  {:>12}  {:>8}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}  {:>7}  {:>6}  {:>6}  {:>6}\n",
                     "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
                     "busbw", "#wrong");
  const auto side = [](double time, double algbw, double busbw, const char* check) {
    return fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", fit_number(time, 7), fit_number(algbw, 6),
                       fit_number(busbw, 6), check);
  };
  for (const NcclTestsRow& row : run.rows) {
    out += fmt::format("{:12.0f}  {:12d}  {:>8}  {:>6}  {:>6}", row.size_bytes, row.count, row.type,
                       row.redop.empty() ? "none" : row.redop, -1);
    out += side(row.time_us, row.algbw_gbps, row.busbw_gbps, "0");
    if (row.in_place_time_us)
      out += side(*row.in_place_time_us, row.in_place_algbw_gbps.value_or(0), row.in_place_busbw_gbps.value_or(0),
                  "N/A");
    else
      out += fmt::format("  {:>7}  {:>6}  {:>6}  {:>6}", "N/A", "N/A", "N/A", "N/A");
    out += "\n";
  }
  out += "# Out of bounds values : 0 OK\n";
  if (run.avg_busbw_gbps) out += fmt::format("# Avg bus bandwidth    : {:g} \n", *run.avg_busbw_gbps);
  return out;
}

}  // namespace tessera
