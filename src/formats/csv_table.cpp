#include "formats/csv_table.h"

#include <string_view>

#include <set>

#include "core/error.h"

namespace tessera {

int CsvTable::column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return static_cast<int>(i);
  return -1;
}

CsvTable parse_csv(const std::string& text, const std::string& what) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, field_started = false;
  std::size_t line = 1;
  auto end_field = [&] {
    record.push_back(field);
    field.clear();
    field_started = false;
  };
  auto end_record = [&] {
    end_field();
    if (!(record.size() == 1 && record[0].empty())) records.push_back(record);
    record.clear();
  };
  // A UTF-8 byte-order mark (spreadsheet exports write one) is not part of the first column's name.
  constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
  const std::size_t start = std::string_view(text).substr(0, kUtf8Bom.size()) == kUtf8Bom ? kUtf8Bom.size() : 0;
  for (std::size_t i = start; i < text.size(); ++i) {
    const char ch = text[i];
    if (quoted) {
      if (ch == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (ch == '\n') ++line;
        field += ch;
      }
      continue;
    }
    if (ch == '"' && !field_started) {
      quoted = true;
      field_started = true;
    } else if (ch == ',') {
      end_field();
    } else if (ch == '\n') {
      end_record();
      ++line;
    } else if (ch != '\r') {
      field += ch;
      field_started = true;
    }
  }
  if (quoted) throw Error(what, "unterminated quoted field near line " + std::to_string(line), "RFC 4180 CSV");
  if (field_started || !record.empty()) end_record();
  if (records.empty()) throw Error(what, "empty file", "a CSV file with a header row");
  CsvTable table;
  table.header = records.front();
  // column() finds the first of two equal names, so a repeated header would silently shadow the
  // second column: the same rule as JSON keys, a name given twice is an error.
  std::set<std::string> names;
  for (const std::string& name : table.header)
    if (!names.insert(name).second)
      throw Error(what, "column '" + name + "' appears twice in the header", "each column name once");
  for (std::size_t r = 1; r < records.size(); ++r) {
    if (records[r].size() != table.header.size())
      throw Error(what, "row " + std::to_string(r + 1) + " has " + std::to_string(records[r].size()) +
                            " fields, the header has " + std::to_string(table.header.size()),
                  "rows with one field per header column");
    table.rows.push_back(std::move(records[r]));
  }
  return table;
}

}  // namespace tessera
