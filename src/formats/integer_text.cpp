#include "formats/integer_text.h"

#include <charconv>
#include <cmath>

#include "core/error.h"

namespace tessera {

std::int64_t parse_integer(const std::string& text, const std::string& field) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range)
    throw Error(field, "'" + text + "' is out of range", "an integer up to 9.2e18");
  if (ec != std::errc() || ptr != end || text.empty())
    throw Error(field, "'" + text + "' is not an integer", "an integer");
  return value;
}

double parse_number(const std::string& text, const std::string& field) {
  double value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty() || !std::isfinite(value))
    throw Error(field, "'" + text + "' is not a finite number", "a number");
  return value;
}

}  // namespace tessera
