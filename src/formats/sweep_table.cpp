#include "formats/sweep_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>

#include "core/error.h"

namespace tessera {

namespace {

// Whole numbers up to 2^53 are exact in a double; no measured size comes near.
constexpr double kLargestExactWhole = 9007199254740992.0;

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

std::vector<std::string> split_fields(std::string_view line) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = line.find(',', start);
    fields.emplace_back(trimmed(line.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start)));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

// The whole cell as a finite number, or nullopt.
std::optional<double> parsed_number(std::string_view text) {
  double value = 0;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || text.empty() || !std::isfinite(value)) return std::nullopt;
  return value;
}

// The exponent of a number printed as 1.5e-05 (its text after the 'e').
double number_after(std::string_view text, std::size_t e_at) {
  double exponent = 0;
  const std::string_view digits = text.substr(e_at + 1);
  std::from_chars(digits.data() + (digits.starts_with('+') ? 1 : 0), digits.data() + digits.size(), exponent);
  return exponent;
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

SweepTable::SweepTable(std::string_view text, std::string kind, std::string file, std::vector<std::string> required,
                       std::vector<std::string> optional, std::size_t max_rows)
    : kind_(std::move(kind)), file_(std::move(file)), required_(std::move(required)), optional_(std::move(optional)),
      max_rows_(max_rows) {
  std::size_t number = 0, start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    read_line(text.substr(start, end - start), ++number);
    if (end == text.size()) break;
    start = end + 1;
  }
  if (!header_read_) fail(1, 1, "no header row", "a first row naming " + joined(required_));
  if (rows_.empty()) fail(header_line_, 1, "the file has no rows", "at least one measurement");
}

void SweepTable::fail(std::size_t line, std::size_t column, const std::string& what, const std::string& allowed) const {
  throw Error(kind_ + ":" + file_ + ":" + std::to_string(line) + "." + std::to_string(column), what, allowed);
}

void SweepTable::read_line(std::string_view line, std::size_t number) {
  const std::string_view content = trimmed(line);
  if (content.empty() || content.front() == '#') return;
  if (content.find('"') != std::string_view::npos)
    fail(number, 1, "quoted fields are not accepted", "plain comma-separated values");
  std::vector<std::string> fields = split_fields(content);
  if (!header_read_) return read_header(fields, number);
  if (fields.size() != header_.size())
    fail(number, std::min(fields.size(), header_.size()) + 1,
         "row has " + std::to_string(fields.size()) + " fields, the header on line " + std::to_string(header_line_) +
             " has " + std::to_string(header_.size()) + " (truncated or garbled)",
         "one field per header column");
  if (rows_.size() >= max_rows_)
    fail(number, 1, "more than " + std::to_string(max_rows_) + " rows", "at most that many measurements");
  rows_.push_back({number, std::move(fields)});
}

void SweepTable::read_header(const std::vector<std::string>& fields, std::size_t number) {
  // A column the reader uses must be named once; other columns are ignored, repeated or not.
  const auto used = [&](const std::string& name) {
    return std::find(required_.begin(), required_.end(), name) != required_.end() ||
           std::find(optional_.begin(), optional_.end(), name) != optional_.end();
  };
  for (std::size_t i = 0; i < fields.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (fields[i] == fields[j] && used(fields[i]))
        fail(number, i + 1, "column '" + fields[i] + "' appears twice", "each name once");
  header_ = fields;
  header_read_ = true;
  header_line_ = number;
  for (const auto& name : required_)
    if (!index(name))
      fail(number, fields.size() + 1, "the header has no column '" + name + "'",
           "a header naming " + joined(required_) + " (any order; other columns are ignored)");
}

std::optional<std::size_t> SweepTable::index(std::string_view name) const {
  for (std::size_t i = 0; i < header_.size(); ++i)
    if (header_[i] == name) return i;
  return std::nullopt;
}

SweepRow SweepTable::row(std::size_t i) const { return SweepRow(*this, rows_.at(i)); }

std::size_t SweepRow::column_of(std::string_view column) const {
  const auto at = table_->index(column);
  if (!at) table_->fail(line(), 1, "column '" + std::string(column) + "' is not in the header", "a header naming it");
  return *at;
}

std::optional<std::string_view> SweepRow::cell(std::string_view column) const {
  const auto at = table_->index(column);
  if (!at) return std::nullopt;
  return std::string_view(line_->fields[*at]);
}

std::string_view SweepRow::text(std::string_view column) const { return line_->fields[column_of(column)]; }

void SweepRow::fail(std::string_view column, const std::string& what, const std::string& allowed) const {
  const auto at = table_->index(column);
  table_->fail(line(), at ? *at + 1 : 1, what, allowed);
}

double SweepRow::number(std::string_view column) const {
  const auto value = parsed_number(text(column));
  if (!value) fail(column, std::string(column) + " '" + std::string(text(column)) + "' is not a number", "a finite number");
  return *value;
}

double SweepRow::positive(std::string_view column) const {
  const auto value = parsed_number(text(column));
  if (!value || *value <= 0)
    fail(column, std::string(column) + " '" + std::string(text(column)) + "' is not a positive number", "a positive number");
  return *value;
}

double SweepRow::whole(std::string_view column) const {
  const auto value = parsed_number(text(column));
  if (!value || *value <= 0 || std::floor(*value) != *value || *value > kLargestExactWhole)
    fail(column, std::string(column) + " '" + std::string(text(column)) + "' is not a positive whole number",
         "a positive integer");
  return *value;
}

double SweepRow::printed_rounding(std::string_view column) const {
  const std::string_view cell_text = text(column);
  const double value = std::abs(number(column));
  const std::size_t exponent_at = cell_text.find_first_of("eE");
  const std::string_view mantissa = cell_text.substr(0, exponent_at);
  const std::size_t point = mantissa.find('.');
  const double decimals = point == std::string_view::npos ? 0.0 : static_cast<double>(mantissa.size() - point - 1);
  const double exponent = exponent_at == std::string_view::npos ? 0.0 : number_after(cell_text, exponent_at);
  return value > 0 ? 0.5 * std::pow(10.0, exponent - decimals) / value : 0.0;
}

std::string_view SweepRow::choice(std::string_view column, std::initializer_list<std::string_view> allowed) const {
  const std::string_view value = text(column);
  std::string names;
  for (std::string_view a : allowed) {
    if (value == a) return value;
    names += (names.empty() ? "" : ", ") + std::string(a);
  }
  fail(column, std::string(column) + " '" + std::string(value) + "' is not known", names);
}

}  // namespace tessera
