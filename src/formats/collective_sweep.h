// Collective timings over torch.distributed (the probe's collectives.csv; README "tessera probe"),
// in the sweep rules of formats/sweep_table.h:
//
//   kind,bytes,ranks,nodes,gpus_per_node,time_us,algbw_gbps,busbw_gbps
//
// `kind` all_reduce, all_gather, reduce_scatter, all_to_all or send_recv; `bytes` sized as
// nccl-tests sizes it (formats/nccl_tests.h NcclTestsRow::size_bytes), over a group of `ranks` =
// nodes x gpus_per_node processes; `time_us` the slowest rank's mean per call. Each row must keep
// its own arithmetic, as nccl-tests' rows do: algbw = bytes / time / 1e9 and busbw = algbw x
// nccl_bus_bandwidth_factor, to 1% beyond the rounding of the printed digits.
// Errors: Error("collectives:<file>:<line>.<column>", what, allowed).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "formats/nccl_tests.h"

namespace tessera {

struct CollectiveSweepRow {
  std::size_t line = 0;
  NcclCollective kind = NcclCollective::all_reduce;
  double bytes = 0;
  std::int64_t ranks = 0, nodes = 0, gpus_per_node = 0;
  double time_s = 0;
};

std::vector<CollectiveSweepRow> parse_collective_sweep(std::string_view csv_text, const std::string& file);

}  // namespace tessera
