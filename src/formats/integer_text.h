// A whole decimal integer read from command-line or CSV text, with the field named on failure.
#pragma once

#include <cstdint>
#include <string>

namespace tessera {

// Throws Error(field, ...) when `text` is not a whole integer or does not fit in 64 bits; callers
// check their own range (require_positive and friends).
std::int64_t parse_integer(const std::string& text, const std::string& field);
// A finite decimal number (e.g. "1.25", "2e3"); throws Error(field, ...) otherwise.
double parse_number(const std::string& text, const std::string& field);

}  // namespace tessera
