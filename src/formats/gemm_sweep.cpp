#include "formats/gemm_sweep.h"

#include <array>
#include <charconv>
#include <cmath>
#include <optional>

#include "core/error.h"

namespace tessera {

namespace {

// Shapes of one sweep: a grid of 16 sizes per dimension (m, n, k) in two dtypes is 8,192; 10,000 shapes
// are read and fitted in about a second (README "Limits").
constexpr std::size_t kMaxGemmRows = 10'000;

constexpr std::array<std::string_view, 5> kColumns = {"m", "n", "k", "dtype", "tflops"};
// Whole dimensions up to 2^53 are exact in a double; no GEMM comes near.
constexpr double kLargestExactDimension = 9007199254740992.0;

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

std::vector<std::string_view> split_fields(std::string_view line) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    fields.push_back(trim(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

class GemmSweepReader {
 public:
  explicit GemmSweepReader(const std::string& file) : file_(file) {}

  std::vector<GemmSweepRow> read(std::string_view text) {
    std::size_t number = 0, start = 0;
    while (start <= text.size()) {
      std::size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      read_line(text.substr(start, end - start), ++number);
      if (end == text.size()) break;
      start = end + 1;
    }
    if (!header_read_) fail(1, 1, "no header row", "a first row 'm,n,k,dtype,tflops'");
    if (rows_.empty()) fail(header_line_, 1, "the sweep has no rows", "at least one measured shape");
    return rows_;
  }

 private:
  [[noreturn]] void fail(std::size_t line, std::size_t column, const std::string& what,
                         const std::string& allowed) const {
    throw Error("gemm:" + file_ + ":" + std::to_string(line) + "." + std::to_string(column), what, allowed);
  }

  void read_line(std::string_view line, std::size_t number) {
    const std::string_view content = trim(line);
    if (content.empty() || content.front() == '#') return;
    if (content.find('"') != std::string_view::npos)
      fail(number, 1, "quoted fields are not accepted", "plain comma-separated values");
    const std::vector<std::string_view> fields = split_fields(content);
    if (!header_read_) read_header(fields, number);
    else read_row(fields, number);
  }

  void read_header(const std::vector<std::string_view>& fields, std::size_t number) {
    for (std::size_t i = 0; i < fields.size(); ++i) {
      for (std::size_t c = 0; c < kColumns.size(); ++c) {
        if (fields[i] != kColumns[c]) continue;
        if (index_[c]) fail(number, i + 1, "column '" + std::string(fields[i]) + "' appears twice", "each name once");
        index_[c] = i;
      }
    }
    for (std::size_t c = 0; c < kColumns.size(); ++c)
      if (!index_[c])
        fail(number, fields.size() + 1, "the header has no column '" + std::string(kColumns[c]) + "'",
             "a header naming m, n, k, dtype, tflops (any order; other columns are ignored)");
    width_ = fields.size();
    header_read_ = true;
    header_line_ = number;
  }

  double positive(const std::vector<std::string_view>& fields, std::size_t c, std::size_t number, bool whole) const {
    const std::size_t at = *index_[c];
    const std::string_view text = fields[at];
    double value = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    const bool parsed = ec == std::errc() && ptr == text.data() + text.size() && !text.empty() && std::isfinite(value);
    if (!parsed || value <= 0 || (whole && (std::floor(value) != value || value > kLargestExactDimension)))
      fail(number, at + 1, std::string(kColumns[c]) + " '" + std::string(text) + "' is not a positive " +
                               (whole ? "whole number" : "number"),
           whole ? "a positive integer" : "a positive number");
    return value;
  }

  void read_row(const std::vector<std::string_view>& fields, std::size_t number) {
    if (fields.size() != width_)
      fail(number, std::min(fields.size(), width_) + 1,
           "row has " + std::to_string(fields.size()) + " fields, the header on line " + std::to_string(header_line_) +
               " has " + std::to_string(width_) + " (truncated or garbled)",
           "one field per header column");
    GemmSweepRow row;
    row.line = number;
    row.m = positive(fields, 0, number, true);
    row.n = positive(fields, 1, number, true);
    row.k = positive(fields, 2, number, true);
    const std::size_t dtype_at = *index_[3];
    const std::string_view dtype = fields[dtype_at];
    if (dtype != "bf16" && dtype != "fp16" && dtype != "fp8")
      fail(number, dtype_at + 1, "dtype '" + std::string(dtype) + "' is not known", "bf16, fp16, fp8");
    row.fp8 = dtype == "fp8";
    row.tflops = positive(fields, 4, number, false);
    if (rows_.size() >= kMaxGemmRows)
      fail(number, 1, "more than " + std::to_string(kMaxGemmRows) + " GEMM rows", "a sweep of at most that many shapes");
    rows_.push_back(row);
  }

  std::string file_;
  std::array<std::optional<std::size_t>, kColumns.size()> index_{};
  std::size_t width_ = 0, header_line_ = 0;
  bool header_read_ = false;
  std::vector<GemmSweepRow> rows_;
};

}  // namespace

std::vector<GemmSweepRow> parse_gemm_sweep(std::string_view csv_text, const std::string& file) {
  return GemmSweepReader(file).read(csv_text);
}

}  // namespace tessera
