#include "formats/nccl_tests.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/core.h>

#include "core/error.h"

namespace tessera {

namespace {

struct CollectiveInfo {
  NcclCollective collective;
  std::string_view name, binary;
};
constexpr std::array<CollectiveInfo, 5> kCollectives = {{
    {NcclCollective::all_reduce, "all_reduce", "all_reduce_perf"},
    {NcclCollective::all_gather, "all_gather", "all_gather_perf"},
    {NcclCollective::reduce_scatter, "reduce_scatter", "reduce_scatter_perf"},
    {NcclCollective::all_to_all, "all_to_all", "alltoall_perf"},
    {NcclCollective::send_recv, "send_recv", "sendrecv_perf"},
}};
// nccl-tests binaries whose tables this reader does not take (their bandwidth means something
// else: rooted or variable-size operations).
constexpr std::array<std::string_view, 6> kOtherBinaries = {
    "broadcast_perf", "reduce_perf", "gather_perf", "scatter_perf", "hypercube_perf", "alltoallv_perf"};

// Bytes per element of each type name nccl-tests prints (src/common.cu test_typenames; the NCCL 1
// names char / int at the bottom).
const std::map<std::string, int, std::less<>>& type_bytes() {
  static const std::map<std::string, int, std::less<>> bytes = {
      {"int8", 1},   {"uint8", 1},  {"int32", 4},    {"uint32", 4}, {"int64", 8},  {"uint64", 8},
      {"half", 2},   {"float", 4},  {"double", 8},   {"bfloat16", 2}, {"f8e4m3", 1}, {"f8e5m2", 1},
      {"char", 1},   {"int", 4}};
  return bytes;
}

std::string allowed_types() {
  std::string out;
  for (const auto& [name, bytes] : type_bytes()) out += (out.empty() ? "" : ", ") + name;
  return out;
}

// A printed number and the half-unit of its last digit: nccl-tests rounds every figure to fit its
// column (util.cu getFloatStr: 2, 1 or 0 decimals, then %e), so each check allows that much.
struct Printed {
  double value = 0;
  double half_unit = 0;
};

std::optional<Printed> read_printed(std::string_view text) {
  double value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || !std::isfinite(value))
    return std::nullopt;
  const std::size_t exponent_at = text.find_first_of("eE");
  const std::string_view mantissa = text.substr(0, exponent_at);
  const std::size_t point = mantissa.find('.');
  const int decimals = point == std::string_view::npos ? 0 : static_cast<int>(mantissa.size() - point - 1);
  int exponent = 0;
  if (exponent_at != std::string_view::npos)
    std::from_chars(text.data() + exponent_at + 1 + (text[exponent_at + 1] == '+'), text.data() + text.size(),
                    exponent);
  return Printed{value, 0.5 * std::pow(10.0, exponent - decimals)};
}

std::vector<std::string_view> split_words(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

bool all_digits(std::string_view word) {
  return !word.empty() && std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The per-line prefix a launcher adds: `srun --label` ("  3: ") or Open MPI --tag-output
// ("[1,0]<stdout>:").
std::string_view strip_launcher_prefix(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') ++i;
  std::size_t digits = i;
  while (digits < line.size() && line[digits] >= '0' && line[digits] <= '9') ++digits;
  if (digits > i && digits + 1 < line.size() && line[digits] == ':' && line[digits + 1] == ' ')
    return line.substr(digits + 2);
  if (line.starts_with("[")) {
    const std::size_t close = line.find("]<std");
    const std::size_t colon = line.find(">:");
    if (close != std::string_view::npos && colon != std::string_view::npos && colon > close)
      return line.substr(colon + 2);
  }
  return line;
}

// Columns of one side (out-of-place or in-place) of the table.
struct SideColumns {
  int time = -1, algbw = -1, busbw = -1, check = -1;  // check: #wrong or (pre-2.13) error
  bool check_counts_errors = true;                      // #wrong counts wrong elements; error is a deviation
};

struct TableLayout {
  std::size_t line = 0;
  int size = -1, count = -1, type = -1, redop = -1, root = -1;
  SideColumns out_of_place, in_place;
  std::size_t columns = 0;  // words per row (the timestamp counts as two)
};

// Result rows of one run: a sweep from 1 B to 16 GiB doubling each step has 35; 10,000 holds any
// step size nccl-tests' -i / -f allow in practice and is read and fitted in about a second.
constexpr std::size_t kMaxNcclRows = 10'000;

constexpr const char* kHeaderForm = "nccl-tests' header '# size count type redop root time algbw busbw #wrong ...'";

class NcclTestsReader {
 public:
  NcclTestsReader(const std::string& file, NcclShape shape) : file_(file), shape_(shape) { run_.file = file; }

  NcclTestsRun read(std::string_view text) {
    std::size_t line_number = 0;
    std::size_t start = 0;
    while (start <= text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(start, end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      ++line_number;
      read_line(strip_launcher_prefix(line), line_number);
      if (end == text.size()) break;
      start = end + 1;
    }
    return finish(line_number);
  }

 private:
  [[noreturn]] void fail(std::size_t line, const std::string& what, const std::string& allowed) const {
    throw Error("nccl:" + file_ + ":" + std::to_string(line), what, allowed);
  }

  void read_line(std::string_view line, std::size_t number) {
    const std::vector<std::string_view> words = split_words(line);
    if (words.empty()) return;
    if (words[0].starts_with("#")) {
      read_comment(line, words, number);
      return;
    }
    note_binaries(words, number);
    if (!layout_ || after_footer_) {
      if (all_digits(words[0]) && after_footer_)
        fail(number, "a results row after the table's footer (line " + std::to_string(footer_line_) + ")",
             "one nccl-tests run per file");
      return;  // command lines, NCCL_DEBUG output before the table
    }
    if (all_digits(words[0])) {
      read_row(words, number);
      return;
    }
    if (line.find("NCCL INFO") != std::string_view::npos || line.find("NCCL WARN") != std::string_view::npos ||
        words[0] == "NCCL")
      return;  // NCCL_DEBUG output between rows
    fail(number, "unexpected text in the results table: '" + std::string(line) + "'",
         "rows of numbers, '#' lines, NCCL_DEBUG lines");
  }

  // A collective named by a binary on any line ("./build/all_reduce_perf -b 8 ...",
  // "# Collective test starting: all_reduce_perf").
  void note_binaries(const std::vector<std::string_view>& words, std::size_t number) {
    for (std::string_view word : words) {
      const std::size_t slash = word.rfind('/');
      if (slash != std::string_view::npos) word.remove_prefix(slash + 1);
      if (word.ends_with("_mpi")) word.remove_suffix(4);
      for (const CollectiveInfo& info : kCollectives)
        if (word == info.binary) note_collective(info.collective, number);
      for (std::string_view other : kOtherBinaries)
        if (word == other)
          fail(number, std::string(other).insert(0, 1, '\'') + "' is not a collective tessera calibrates",
               "all_reduce_perf, all_gather_perf, reduce_scatter_perf, alltoall_perf, sendrecv_perf");
    }
  }

  void note_collective(NcclCollective collective, std::size_t number) {
    if (collective_ && *collective_ != collective)
      fail(number,
           "a second collective (" + std::string(nccl_collective_name(collective)) + ") after " +
               std::string(nccl_collective_name(*collective_)) + " on line " + std::to_string(collective_line_),
           "one collective per file: split the file");
    if (!collective_) collective_line_ = number;
    collective_ = collective;
  }

  void read_comment(std::string_view line, const std::vector<std::string_view>& words, std::size_t number) {
    note_binaries(words, number);
    // "#  Rank  0 ..." or "#Rank": the word after '#' (or '#' glued to it).
    std::vector<std::string_view> rest(words.begin() + 1, words.end());
    if (words[0].size() > 1) rest.insert(rest.begin(), words[0].substr(1));
    if (rest.empty()) return;
    if (rest[0] == "nThread") {
      if (header_line_ != 0)
        fail(number, "a second run header (the first is on line " + std::to_string(header_line_) + ")",
             "one nccl-tests run per file: a non-MPI build started once per process prints one run each");
      header_line_ = number;
    } else if (rest[0] == "Rank" && rest.size() >= 2 && !layout_) {
      read_rank_line(line, rest, number);
    } else if (std::find(rest.begin(), rest.end(), "algbw") != rest.end() &&
               std::find(rest.begin(), rest.end(), "size") != rest.end()) {
      read_column_header(rest, number);
    } else if (line.find("Out of bounds values") != std::string_view::npos) {
      read_out_of_bounds(line, number);
    } else if (line.find("Avg bus bandwidth") != std::string_view::npos) {
      read_average(line, number);
    }
  }

  void read_rank_line(std::string_view line, const std::vector<std::string_view>& rest, std::size_t number) {
    std::int64_t rank = -1;
    const auto [ptr, ec] = std::from_chars(rest[1].data(), rest[1].data() + rest[1].size(), rank);
    const auto on = std::find(rest.begin(), rest.end(), "on");
    if (ec != std::errc() || ptr != rest[1].data() + rest[1].size() || rank < 0 || on == rest.end() ||
        on + 1 == rest.end())
      fail(number, "garbled rank line: '" + std::string(line) + "'",
           "'#  Rank N Group G Pid P on HOST device D [BUS] GPU NAME'");
    if (!ranks_seen_.insert(rank).second)
      fail(number, "rank " + std::to_string(rank) + " is listed twice",
           "one line per rank (all ranks 0 means the binary was built without MPI=1: each process ran alone)");
    hosts_.insert(std::string(*(on + 1)));
    // The GPU name is the text after the bus id "[...]".
    const std::size_t bracket = line.find(']');
    std::string gpu = bracket == std::string_view::npos ? "" : std::string(line.substr(bracket + 1));
    gpu.erase(0, gpu.find_first_not_of(' '));
    gpu.erase(gpu.find_last_not_of(' ') + 1);
    gpu_names_.insert(gpu);
  }

  void read_column_header(const std::vector<std::string_view>& names, std::size_t number) {
    if (layout_)
      fail(number, "a second results table (the first starts on line " + std::to_string(layout_->line) + ")",
           "one nccl-tests run per file: split the file");
    TableLayout layout;
    layout.line = number;
    int side = 0;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string_view name = names[i];
      const int at = static_cast<int>(i);
      if (name == "size") layout.size = at;
      else if (name == "count") layout.count = at;
      else if (name == "type") layout.type = at;
      else if (name == "redop") layout.redop = at;
      else if (name == "root") layout.root = at;
      else if (name == "cputime")
        fail(number, "this table reports CPU time (-C 1), from which nccl-tests does not compute algbw",
             "a run without -C 1");
      else if (name == "time") {
        // The first time column opens the out-of-place side, the second the in-place side.
        if (layout.out_of_place.time < 0) layout.out_of_place.time = at;
        else if (layout.in_place.time < 0) side = 1, layout.in_place.time = at;
        else fail(number, "more than two time columns", "out-of-place and in-place columns");
      } else if (name == "algbw" || name == "busbw" || name == "#wrong" || name == "error") {
        // Each side's figures follow its time column: a header whose first time column is renamed
        // would otherwise read the in-place side as out-of-place.
        SideColumns& columns = columns_for(layout, side);
        if (columns.time < 0)
          fail(number, "column '" + std::string(name) + "' before its side's time column", kHeaderForm);
        if (name == "algbw") columns.algbw = at;
        else if (name == "busbw") columns.busbw = at;
        else columns.check = at, columns.check_counts_errors = name == "#wrong";
      } else if (name != "timestamp") {
        fail(number, "unknown column '" + std::string(name) + "'", kHeaderForm);
      }
    }
    layout.columns = names.size() + (names.back() == "timestamp" ? 1 : 0);
    const SideColumns& out = layout.out_of_place;
    if (layout.size < 0 || layout.count < 0 || layout.type < 0 || out.time < 0 || out.algbw < 0 || out.busbw < 0)
      fail(number, "the column header lacks size, count, type, time, algbw or busbw", kHeaderForm);
    layout_ = layout;
  }

  static SideColumns& columns_for(TableLayout& layout, int side) {
    return side == 0 ? layout.out_of_place : layout.in_place;
  }

  void read_out_of_bounds(std::string_view line, std::size_t number) {
    const std::size_t colon = line.find(':');
    const std::vector<std::string_view> words = split_words(line.substr(colon + 1));
    if (words.empty() || !all_digits(words[0]))
      fail(number, "garbled footer: '" + std::string(line) + "'", "'# Out of bounds values : N OK'");
    if (words[0] != "0")
      fail(number, "nccl-tests' data check failed (" + std::string(words[0]) + " out-of-bounds values)",
           "a run whose results are valid (Out of bounds values : 0 OK)");
    after_footer_ = true;
    footer_line_ = number;
  }

  void read_average(std::string_view line, std::size_t number) {
    const std::size_t colon = line.find(':');
    const std::vector<std::string_view> words = split_words(line.substr(colon + 1));
    const std::optional<Printed> value = words.empty() ? std::nullopt : read_printed(words[0]);
    if (!value || value->value < 0)
      fail(number, "garbled footer: '" + std::string(line) + "'", "'# Avg bus bandwidth : X'");
    run_.avg_busbw_gbps = value->value;
    after_footer_ = true;
    footer_line_ = number;
  }

  // One side's three figures, checked later against the rank count.
  struct SideValues {
    Printed time, algbw, busbw;
    bool present = false;
  };
  struct PendingRow {
    NcclTestsRow row;
    SideValues out_of_place, in_place;
    int type_bytes = 0;
  };

  void read_row(std::vector<std::string_view> words, std::size_t number) {
    const TableLayout& layout = *layout_;
    // The pre-2.13 table printed an empty redop for ops without a reduction: the row has one word
    // fewer, and the word in the redop column is already a number.
    if (layout.redop >= 0 && words.size() + 1 == layout.columns && static_cast<int>(words.size()) > layout.redop &&
        read_printed(words[static_cast<std::size_t>(layout.redop)]))
      words.insert(words.begin() + layout.redop, std::string_view());
    if (words.size() != layout.columns)
      fail(number,
           "row has " + std::to_string(words.size()) + " columns, the header on line " + std::to_string(layout.line) +
               " has " + std::to_string(layout.columns) + " (truncated or garbled)",
           "complete rows");
    PendingRow pending;
    NcclTestsRow& row = pending.row;
    row.line = number;
    const auto word = [&](int at) { return words[static_cast<std::size_t>(at)]; };
    const std::int64_t size = read_whole(word(layout.size), "size", number);
    row.count = read_whole(word(layout.count), "count", number);
    row.size_bytes = static_cast<double>(size);
    row.type = std::string(word(layout.type));
    if (layout.redop >= 0) row.redop = read_redop(word(layout.redop), number);
    if (layout.root >= 0) (void)read_root(word(layout.root), number);
    const auto type = type_bytes().find(row.type);
    if (type == type_bytes().end()) fail(number, "unknown data type '" + row.type + "'", allowed_types());
    pending.type_bytes = type->second;
    pending.out_of_place = read_side(words, layout.out_of_place, number, "out-of-place", false);
    if (layout.in_place.time >= 0)
      pending.in_place = read_side(words, layout.in_place, number, "in-place", true);
    if (size == 0 && row.count == 0) {
      run_.empty_rows.push_back(number);
      return;
    }
    if (size == 0 || row.count == 0)
      fail(number, "size " + std::to_string(size) + " with count " + std::to_string(row.count),
           "both zero (an empty step) or both positive");
    row.time_us = pending.out_of_place.time.value;
    row.algbw_gbps = pending.out_of_place.algbw.value;
    row.busbw_gbps = pending.out_of_place.busbw.value;
    if (pending.in_place.present) {
      row.in_place_time_us = pending.in_place.time.value;
      row.in_place_algbw_gbps = pending.in_place.algbw.value;
      row.in_place_busbw_gbps = pending.in_place.busbw.value;
    }
    if (pending_.size() >= kMaxNcclRows)
      fail(number, "more than " + std::to_string(kMaxNcclRows) + " result rows", "one nccl-tests run per file");
    pending_.push_back(std::move(pending));
  }

  // nccl-tests' operation names (src/common.cu test_opnames), "none" for operations without a
  // reduction, empty in pre-2.13 tables.
  std::string read_redop(std::string_view text, std::size_t number) const {
    constexpr std::string_view kRedops[] = {"", "sum", "prod", "max", "min", "avg", "mulsum", "none"};
    if (std::find(std::begin(kRedops), std::end(kRedops), text) == std::end(kRedops))
      fail(number, "redop '" + std::string(text) + "' is not an nccl-tests reduction", "sum, prod, max, min, avg, mulsum, none");
    return std::string(text);
  }

  // The root rank of rooted operations, -1 for the others.
  std::int64_t read_root(std::string_view text, std::size_t number) const {
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || ptr != text.data() + text.size() || value < -1)
      fail(number, "root '" + std::string(text) + "' is not a rank", "-1 (no root) or a rank from 0");
    return value;
  }

  std::int64_t read_whole(std::string_view text, const char* column, std::size_t number) const {
    std::int64_t value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || ptr != text.data() + text.size() || value < 0)
      fail(number, std::string(column) + " '" + std::string(text) + "' is not a whole number of bytes or elements",
           "a non-negative integer");
    return value;
  }

  SideValues read_side(const std::vector<std::string_view>& words, const SideColumns& columns, std::size_t number,
                       const char* side, bool may_be_absent) const {
    SideValues values;
    const auto cell = [&](int at) { return at < 0 ? std::string_view("N/A") : words[static_cast<std::size_t>(at)]; };
    if (may_be_absent && cell(columns.time) == "N/A" && cell(columns.algbw) == "N/A" && cell(columns.busbw) == "N/A")
      return values;
    const auto figure = [&](int at, const char* name, bool positive) {
      const std::optional<Printed> value = read_printed(cell(at));
      if (!value || value->value < 0 || (positive && value->value <= 0))
        fail(number,
             std::string(side) + " " + name + " '" + std::string(cell(at)) + "' is not a " +
                 (positive ? "positive" : "non-negative") + " number",
             "a number as nccl-tests prints it");
      return *value;
    };
    values.time = figure(columns.time, "time", true);
    values.algbw = figure(columns.algbw, "algbw", false);
    values.busbw = figure(columns.busbw, "busbw", false);
    values.present = true;
    if (columns.check >= 0 && cell(columns.check) != "N/A") {
      const std::optional<Printed> check = read_printed(cell(columns.check));
      if (!check) fail(number, std::string(side) + " #wrong '" + std::string(cell(columns.check)) + "' is garbled (truncated row?)",
                       "a number or N/A");
      if (columns.check_counts_errors && check->value != 0)
        fail(number,
             std::string(side) + " #wrong is " + std::string(cell(columns.check)) +
                 ": nccl-tests' data check failed, so this row's times are not valid",
             "#wrong 0 or N/A");
    }
    return values;
  }

  void resolve_ranks(std::size_t last_line) {
    const bool overridden = shape_.nodes > 0 || shape_.gpus_per_node > 0;
    if (overridden && (shape_.nodes <= 0 || shape_.gpus_per_node <= 0))
      fail(last_line, "shape override needs both nodes and GPUs per node", "FILE@NODESxGPUS, e.g. ar.txt@2x8");
    if (!ranks_seen_.empty()) {
      const auto listed = static_cast<std::int64_t>(ranks_seen_.size());
      if (*ranks_seen_.rbegin() + 1 != listed)
        fail(last_line,
             "the rank lines list " + std::to_string(listed) + " ranks but number them up to " +
                 std::to_string(*ranks_seen_.rbegin()) + " (some lines are missing)",
             "every rank line, or FILE@NODESxGPUS without them");
      run_.ranks = listed;
      run_.nodes = static_cast<std::int64_t>(hosts_.size());
      if (gpu_names_.size() == 1) run_.gpu_name = *gpu_names_.begin();
      if (overridden && (shape_.nodes * shape_.gpus_per_node != run_.ranks || shape_.nodes != run_.nodes))
        fail(last_line,
             "FILE@" + std::to_string(shape_.nodes) + "x" + std::to_string(shape_.gpus_per_node) +
                 " disagrees with the rank lines (" + std::to_string(run_.ranks) + " ranks on " +
                 std::to_string(run_.nodes) + " hosts)",
             "a shape that matches the rank lines, or none");
      return;
    }
    if (!overridden)
      fail(last_line, "no rank lines ('#  Rank N ... on HOST ...'), so the GPU count is unknown",
           "FILE@NODESxGPUS, e.g. " + file_ + "@2x8");
    run_.ranks = shape_.nodes * shape_.gpus_per_node;
    run_.nodes = shape_.nodes;
  }

  // nccl-tests' own arithmetic on every row (see the header); catches misread columns and a wrong
  // rank count.
  void check_row(const PendingRow& pending) const {
    const NcclTestsRow& row = pending.row;
    const std::int64_t per_count = nccl_size_ranks_per_count(run_.collective, run_.ranks);
    const double expected_size = static_cast<double>(row.count) * pending.type_bytes * static_cast<double>(per_count);
    if (expected_size != row.size_bytes)
      fail(row.line,
           fmt::format("size {} is not count {} x {} bytes ({}) x {} ({} ranks): the rank count or the columns are wrong",
                       row.size_bytes, row.count, pending.type_bytes, row.type, per_count, run_.ranks),
           "rows that nccl-tests printed for this many ranks");
    check_side(row, pending.out_of_place, "out-of-place");
    if (pending.in_place.present) check_side(row, pending.in_place, "in-place");
  }

  void check_side(const NcclTestsRow& row, const SideValues& side, const char* name) const {
    constexpr double kBytesPerGbPerUs = 1e3;  // GB/s = bytes / (us x 1e-6) / 1e9
    // Relative slack for double arithmetic on top of the printed rounding.
    constexpr double kSlack = 1e-9;
    const double t_low = std::max(side.time.value - side.time.half_unit, 1e-300);
    const double t_high = side.time.value + side.time.half_unit;
    const double alg_high = row.size_bytes / (t_low * kBytesPerGbPerUs);
    const double alg_low = row.size_bytes / (t_high * kBytesPerGbPerUs);
    const double alg = side.algbw.value, alg_unit = side.algbw.half_unit;
    if (alg + alg_unit < alg_low * (1 - kSlack) || alg - alg_unit > alg_high * (1 + kSlack))
      fail(row.line,
           fmt::format("{} algbw {} GB/s is not size / time = {} B / {} us = {:.4g} GB/s", name, alg, row.size_bytes,
                       side.time.value, row.size_bytes / (side.time.value * kBytesPerGbPerUs)),
           "rows whose columns are where nccl-tests prints them");
    const double factor = nccl_bus_bandwidth_factor(run_.collective, run_.ranks);
    const double bus = side.busbw.value, bus_unit = side.busbw.half_unit;
    const double bus_low = std::max(alg - alg_unit, alg_low) * factor;
    const double bus_high = std::min(alg + alg_unit, alg_high) * factor;
    if (bus + bus_unit < bus_low * (1 - kSlack) || bus - bus_unit > bus_high * (1 + kSlack))
      fail(row.line,
           fmt::format("{} busbw {} GB/s is not algbw x {:.4g} ({} with {} ranks) = {:.4g} GB/s", name, bus, factor,
                       nccl_collective_name(run_.collective), run_.ranks, alg * factor),
           "the rank count the benchmark ran with (FILE@NODESxGPUS)");
  }

  NcclTestsRun finish(std::size_t last_line) {
    if (!collective_)
      fail(1, "the file does not say which collective it measured",
           "a line '# Collective test starting: all_reduce_perf' (or the command line that ran the binary) at the top");
    run_.collective = *collective_;
    if (!layout_)
      fail(last_line, "no results table (the '#  size  count  type ... algbw  busbw' header is missing)",
           "the complete output of one nccl-tests run");
    if (pending_.empty() && run_.empty_rows.empty())
      fail(last_line, "the results table has no rows", "the complete output of one nccl-tests run");
    resolve_ranks(last_line);
    for (const PendingRow& pending : pending_) {
      check_row(pending);
      run_.rows.push_back(pending.row);
    }
    return run_;
  }

  std::string file_;
  NcclShape shape_;
  NcclTestsRun run_;
  std::optional<NcclCollective> collective_;
  std::size_t collective_line_ = 0, header_line_ = 0, footer_line_ = 0;
  std::optional<TableLayout> layout_;
  bool after_footer_ = false;
  std::set<std::int64_t> ranks_seen_;
  std::set<std::string> hosts_, gpu_names_;
  std::vector<PendingRow> pending_;
};

}  // namespace

std::string_view nccl_collective_name(NcclCollective collective) {
  for (const CollectiveInfo& info : kCollectives)
    if (info.collective == collective) return info.name;
  return "unknown";
}

std::string_view nccl_tests_binary(NcclCollective collective) {
  for (const CollectiveInfo& info : kCollectives)
    if (info.collective == collective) return info.binary;
  return "unknown";
}

double nccl_bus_bandwidth_factor(NcclCollective collective, std::int64_t ranks) {
  const double n = static_cast<double>(ranks);
  switch (collective) {
    case NcclCollective::all_reduce: return 2.0 * (n - 1) / n;
    case NcclCollective::all_gather:
    case NcclCollective::reduce_scatter:
    case NcclCollective::all_to_all: return (n - 1) / n;
    case NcclCollective::send_recv: return 1.0;
  }
  return 1.0;
}

std::int64_t nccl_size_ranks_per_count(NcclCollective collective, std::int64_t ranks) {
  switch (collective) {
    case NcclCollective::all_gather:
    case NcclCollective::reduce_scatter:
    case NcclCollective::all_to_all: return ranks;
    case NcclCollective::all_reduce:
    case NcclCollective::send_recv: return 1;
  }
  return 1;
}

NcclTestsRun parse_nccl_tests(std::string_view text, const std::string& file, NcclShape shape_override) {
  return NcclTestsReader(file, shape_override).read(text);
}

std::pair<std::string, NcclShape> split_nccl_argument(const std::string& argument) {
  const std::size_t at = argument.rfind('@');
  if (at == std::string::npos) {
    if (argument.empty()) throw Error("--nccl", "empty file name", "FILE or FILE@NODESxGPUS");
    return {argument, NcclShape{}};
  }
  const std::string file = argument.substr(0, at), shape = argument.substr(at + 1);
  const std::size_t x = shape.find('x');
  const auto whole = [](const std::string& text, std::int64_t& value) {
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    return ec == std::errc() && ptr == text.data() + text.size() && !text.empty() && all_digits(text) && value > 0;
  };
  NcclShape result;
  if (file.empty() || x == std::string::npos || !whole(shape.substr(0, x), result.nodes) ||
      !whole(shape.substr(x + 1), result.gpus_per_node))
    throw Error("--nccl", "'" + argument + "' does not end in @NODESxGPUS",
                "FILE or FILE@NODESxGPUS with positive integers, e.g. ar.txt@2x8 (a path containing '@' needs the suffix)");
  return {file, result};
}

}  // namespace tessera
