// A small RFC 4180 CSV reader: header row, fields quoted only when they hold commas or quotes.
#pragma once

#include <string>
#include <vector>

namespace tessera {

struct CsvTable {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  // Column index of `name`, or -1.
  int column(const std::string& name) const;
};

// Throws Error(`what`, ...) on an unterminated quote, a column name given twice in the header or
// a row with the wrong number of fields.
CsvTable parse_csv(const std::string& text, const std::string& what);

}  // namespace tessera
