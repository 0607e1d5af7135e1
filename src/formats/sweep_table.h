// The plain CSV of measurement sweeps (GEMM sweeps, the probe's attention / kernel / collective
// tables; README "tessera probe"): one header row naming the columns, in any order (other columns
// are allowed and ignored; each column the reader uses is named once), then one row per measurement. Blank lines and
// lines starting with '#' (a source, a note) are skipped; fields are split at commas and trimmed;
// quoted fields are not accepted (no value in a sweep needs one). Every error names
// `<kind>:<file>:<line>.<column>` (1-based) and what would have been accepted.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera {

// How far a row's derived column (a GEMM's tflops, a collective's bandwidths) may disagree with
// its own sizes and time beyond the printed rounding: both come from one timing, so only rounding
// separates them.
inline constexpr double kArithmeticTolerance = 0.01;

class SweepRow;

class SweepTable {
 public:
  // `required` columns must be in the header, `optional` ones may be; `max_rows` bounds the rows.
  SweepTable(std::string_view text, std::string kind, std::string file, std::vector<std::string> required,
             std::vector<std::string> optional, std::size_t max_rows);

  std::size_t size() const { return rows_.size(); }
  SweepRow row(std::size_t i) const;
  bool has_column(std::string_view name) const { return index(name).has_value(); }
  std::size_t header_line() const { return header_line_; }
  const std::string& file() const { return file_; }
  [[noreturn]] void fail(std::size_t line, std::size_t column, const std::string& what, const std::string& allowed) const;

 private:
  friend class SweepRow;
  struct Line {
    std::size_t number = 0;
    std::vector<std::string> fields;
  };
  void read_line(std::string_view line, std::size_t number);
  void read_header(const std::vector<std::string>& fields, std::size_t number);
  std::optional<std::size_t> index(std::string_view name) const;

  std::string kind_, file_;
  std::vector<std::string> required_, optional_;
  std::size_t max_rows_ = 0;
  std::vector<std::string> header_;
  std::size_t header_line_ = 0;
  bool header_read_ = false;
  std::vector<Line> rows_;
};

// One data row; its readers throw the table's Error naming this row's line and the column.
class SweepRow {
 public:
  std::size_t line() const { return line_->number; }
  // The cell of a column the header has; an optional column the header lacks gives nullopt.
  std::optional<std::string_view> cell(std::string_view column) const;
  std::string_view text(std::string_view column) const;
  double number(std::string_view column) const;    // any finite number
  double positive(std::string_view column) const;  // finite and > 0
  double whole(std::string_view column) const;     // a positive integer (exact in a double)
  // The relative rounding of the cell as printed: half a unit of its last digit over its value
  // (0.0146 -> 0.0005 / 0.0146); what a check of the row's own arithmetic must allow for.
  double printed_rounding(std::string_view column) const;
  // One of `allowed` (exact spelling); the error lists them.
  std::string_view choice(std::string_view column, std::initializer_list<std::string_view> allowed) const;
  [[noreturn]] void fail(std::string_view column, const std::string& what, const std::string& allowed) const;

 private:
  friend class SweepTable;
  SweepRow(const SweepTable& table, const SweepTable::Line& line) : table_(&table), line_(&line) {}
  std::size_t column_of(std::string_view column) const;
  const SweepTable* table_;
  const SweepTable::Line* line_;
};

}  // namespace tessera
