// One row of a validation-schema CSV (../shared/validation/README.md §1) read by column name: the
// cells as text, integers and numbers, each error naming its column ("csv.<column>").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "formats/csv_table.h"
#include "formats/integer_text.h"

namespace tessera {

struct ValidationRow {
  const CsvTable& table;
  const std::vector<std::string>& cells;
  // The cell of column `name`; Error("csv.<name>", "column missing") when the table has none.
  std::string get(const char* name) const;
  bool empty(const char* name) const { return get(name).empty(); }
  // Columns added to the schema later (etp, moe_layer_freq): absent means unknown.
  bool has(const char* name) const { return table.column(name) >= 0; }
  std::int64_t integer(const char* name) const { return parse_integer(get(name), std::string("csv.") + name); }
  std::int64_t integer_or(const char* name, std::int64_t fallback) const {
    return empty(name) ? fallback : integer(name);
  }
  // A finite number; Error("csv.<name>", "'x' is not a number") otherwise.
  double number(const char* name) const;
};

}  // namespace tessera
