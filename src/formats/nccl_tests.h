// The text that NVIDIA's nccl-tests print (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// alltoall_perf, sendrecv_perf), read into plain rows for `tessera calibrate --nccl`.
//
// Format read (nccl-tests a0b82b2, src/util.cu: writeDeviceReport, writeResultHeader,
// writeBenchmarkLinePreamble / Body, writeResultFooter; and the pre-2.13 layout of 51af557^,
// src/common.cu):
//   # nccl-tests version 2.19.6 ...                       (2.17+; optional)
//   # Collective test starting: all_reduce_perf           (2.15+; else the binary on a command line)
//   # nThread 1 nGpus 1 minBytes 8 maxBytes ... iters: 20 ...
//   #  Rank  0 Group  0 Pid 1887 on worker-1 device  0 [0x8d] NVIDIA H100 80GB HBM3
//   #       size  count  type  redop  root  time algbw busbw #wrong  time algbw busbw #wrong
//          8388608  2097152  float  sum  -1  81.16 103.36 180.88  0  80.46 104.26 182.45  0
//   # Out of bounds values : 0 OK
//   # Avg bus bandwidth    : 95.3009
// Accepted variations: the pre-2.13 table (no `root` column, an `error` column holding the largest
// deviation instead of `#wrong`, a blank `redop` for ops without a reduction), `N/A` in a #wrong /
// error cell (no data check), the per-iteration columns of `-I 1` and the `-S 1` timestamp
// (ignored), NCCL_DEBUG lines anywhere, and the line prefixes of `srun --label` ("3: ") and
// Open MPI's `--tag-output` ("[1,0]<stdout>:").
// Refused with an Error naming the line: a collective other than the five, two collectives or two
// runs in one file (one run per file: split it), a `cputime` table (-C 1: its algbw is not
// size / time), truncated or garbled rows, a non-zero #wrong or "Out of bounds values", duplicate
// or missing rank lines, and any row that breaks nccl-tests' own arithmetic (see below).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tessera {

enum class NcclCollective { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };

// "all_reduce", "all_gather", "reduce_scatter", "all_to_all", "send_recv".
std::string_view nccl_collective_name(NcclCollective collective);
// The nccl-tests binary that measures it: "all_reduce_perf", ..., "alltoall_perf", "sendrecv_perf".
std::string_view nccl_tests_binary(NcclCollective collective);
// busbw / algbw as nccl-tests computes it (src/all_reduce.cu AllReduceGetBw: 2(n-1)/n;
// all_gather.cu, reduce_scatter.cu, alltoall.cu: (n-1)/n; sendrecv.cu: 1).
double nccl_bus_bandwidth_factor(NcclCollective collective, std::int64_t ranks);
// How many ranks' data the `size` column holds per `count` element: 1 for all_reduce and
// send_recv, `ranks` for all_gather, reduce_scatter and all_to_all (see NcclTestsRow::size_bytes).
std::int64_t nccl_size_ranks_per_count(NcclCollective collective, std::int64_t ranks);

struct NcclTestsRow {
  std::size_t line = 0;  // 1-based line in the file
  // The `size` column: max(send, receive) bytes of one rank (src/common.cu, the preamble's
  // max(sendBytes, expectedBytes)). all_reduce: the buffer reduced; all_gather: the gathered output
  // (ranks x count elements); reduce_scatter: the input (ranks x count); all_to_all: the whole send
  // buffer (ranks x count sent to each peer); send_recv: the buffer each rank sends.
  double size_bytes = 0;
  // The `count` column: elements per rank and call argument (all_gather / reduce_scatter: per-rank
  // share; all_to_all: elements per peer).
  std::int64_t count = 0;
  std::string type, redop;  // redop "" where the pre-2.13 table left it blank
  double time_us = 0, algbw_gbps = 0, busbw_gbps = 0;  // out-of-place
  std::optional<double> in_place_time_us, in_place_algbw_gbps, in_place_busbw_gbps;  // N/A -> empty
};

struct NcclTestsRun {
  std::string file;
  NcclCollective collective = NcclCollective::all_reduce;
  std::int64_t ranks = 0;   // GPUs in the test: rank lines, or the caller's nodes x GPUs per node
  std::int64_t nodes = 0;   // distinct hosts in the rank lines, or the caller's nodes
  std::string gpu_name;     // from the rank lines ("NVIDIA H100 80GB HBM3"); "" if absent or mixed
  std::vector<NcclTestsRow> rows;
  // Lines of rows with size 0 and count 0: nccl-tests prints them when the per-rank share rounds
  // down to nothing (all_gather / reduce_scatter / alltoall with -b below ranks x 16 bytes); they
  // carry no bandwidth, so they are listed here instead of in `rows`.
  std::vector<std::size_t> empty_rows;
  std::optional<double> avg_busbw_gbps;  // "# Avg bus bandwidth : X"
};

// Nodes x GPUs per node given by the user; 0 x 0 = read them from the rank lines.
struct NcclShape {
  std::int64_t nodes = 0, gpus_per_node = 0;
};

// Reads one nccl-tests run. The file must name its collective ("# Collective test starting:" or
// the binary on a command line), else Error asking for that line. Ranks come from the rank lines;
// without them `shape_override` must be given (Error naming FILE@NODESxGPUS otherwise); with both,
// they must agree. Every row is checked against nccl-tests' own arithmetic:
//   size = count x bytes(type) x nccl_size_ranks_per_count,
//   algbw = size / time, busbw = algbw x nccl_bus_bandwidth_factor,
// within the rounding of the printed digits; a row that breaks one (misread columns, a wrong rank
// count) is an Error. Errors: Error("nccl:<file>:<line>", what, allowed).
NcclTestsRun parse_nccl_tests(std::string_view text, const std::string& file, NcclShape shape_override = {});

// The run in nccl-tests' own layout (collective line, rank lines on hosts node0.., column header,
// rows printed with nccl-tests' number widths, footer): parse_nccl_tests reads it back to the same
// values. For round-trip tests and for writing measurements back out.
std::string render_nccl_tests(const NcclTestsRun& run);

// The CLI spelling: "FILE" or "FILE@NODESxGPUS" (e.g. "ar.txt@2x8") -> file and shape. Only the
// last '@' counts, so paths that contain one still work when a shape is given. Error on a bad
// suffix (not two positive integers around an 'x').
std::pair<std::string, NcclShape> split_nccl_argument(const std::string& argument);

}  // namespace tessera
