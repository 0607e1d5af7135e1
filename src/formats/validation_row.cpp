#include "formats/validation_row.h"

#include <cmath>
#include <exception>

#include "core/error.h"

namespace tessera {

std::string ValidationRow::get(const char* name) const {
  const int c = table.column(name);
  if (c < 0) throw Error(std::string("csv.") + name, "column missing", "the validation README §1 columns");
  return cells[static_cast<std::size_t>(c)];
}

double ValidationRow::number(const char* name) const {
  const std::string text = get(name);
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {
  }
  throw Error(std::string("csv.") + name, "'" + text + "' is not a number", "a number");
}

}  // namespace tessera
