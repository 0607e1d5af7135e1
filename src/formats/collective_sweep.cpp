#include "formats/collective_sweep.h"

#include <cmath>

#include "formats/sweep_table.h"

namespace tessera {

namespace {
// Five collectives x 30 sizes x two groups is 300 rows; 10,000 bounds the fit.
constexpr std::size_t kMaxCollectiveRows = 10'000;

NcclCollective collective_kind(const SweepRow& r) {
  const std::string_view kind = r.choice("kind", {"all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv"});
  for (NcclCollective c : {NcclCollective::all_reduce, NcclCollective::all_gather, NcclCollective::reduce_scatter,
                           NcclCollective::all_to_all, NcclCollective::send_recv})
    if (nccl_collective_name(c) == kind) return c;
  return NcclCollective::all_reduce;
}

// `column` = `expected` to the tolerance plus the printed rounding of `column` and of `inputs`.
void check_arithmetic(const SweepRow& r, std::string_view column, double expected, double inputs_rounding,
                      const std::string& rule) {
  const double slack = kArithmeticTolerance + r.printed_rounding(column) + inputs_rounding;
  if (std::abs(expected / r.positive(column) - 1.0) > slack)
    r.fail(column, std::string(column) + " " + std::string(r.text(column)) + " disagrees with " + rule + " = " +
                       std::to_string(expected),
           "the row's own arithmetic (" + rule + ")");
}

CollectiveSweepRow collective_row(const SweepRow& r) {
  CollectiveSweepRow row;
  row.line = r.line();
  row.kind = collective_kind(r);
  row.bytes = r.whole("bytes");
  row.ranks = static_cast<std::int64_t>(r.whole("ranks"));
  row.nodes = static_cast<std::int64_t>(r.whole("nodes"));
  row.gpus_per_node = static_cast<std::int64_t>(r.whole("gpus_per_node"));
  if (row.ranks != row.nodes * row.gpus_per_node)
    r.fail("ranks", "ranks " + std::to_string(row.ranks) + " is not nodes x gpus_per_node = " +
                        std::to_string(row.nodes * row.gpus_per_node),
           "the group's processes, nodes x gpus_per_node");
  if (row.ranks < 2) r.fail("ranks", "a collective over " + std::to_string(row.ranks) + " rank", "2 or more ranks");
  row.time_s = r.positive("time_us") * 1e-6;
  const double algbw_gbps = row.bytes / row.time_s / 1e9;
  check_arithmetic(r, "algbw_gbps", algbw_gbps, r.printed_rounding("time_us"), "bytes / time");
  const double factor = nccl_bus_bandwidth_factor(row.kind, row.ranks);
  check_arithmetic(r, "busbw_gbps", r.positive("algbw_gbps") * factor, r.printed_rounding("algbw_gbps"),
                   "algbw x " + std::to_string(factor));
  return row;
}
}  // namespace

std::vector<CollectiveSweepRow> parse_collective_sweep(std::string_view csv_text, const std::string& file) {
  const SweepTable table(csv_text, "collectives", file,
                         {"kind", "bytes", "ranks", "nodes", "gpus_per_node", "time_us", "algbw_gbps", "busbw_gbps"}, {},
                         kMaxCollectiveRows);
  std::vector<CollectiveSweepRow> rows;
  for (std::size_t i = 0; i < table.size(); ++i) rows.push_back(collective_row(table.row(i)));
  return rows;
}

}  // namespace tessera
