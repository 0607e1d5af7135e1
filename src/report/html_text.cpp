#include "report/html_text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/checks.h"
#include "core/error.h"

namespace tessera::report {

namespace {

constexpr double kSvgResolution = 10.0;  // 0.1 px steps
constexpr double kPlainMin = 1e-3;       // below: exponent notation
constexpr double kPlainMax = 1e15;       // at and above: exponent notation
constexpr int kMaxSignificantDigits = 17;

// Drops trailing zeros of a fractional part, then a dangling '.'.
void trim_fraction(std::string& text) {
  if (text.find('.') == std::string::npos) return;
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
}

void insert_thousands_separators(std::string& text) {
  const std::size_t sign = (text[0] == '-') ? 1 : 0;
  std::size_t end = text.find('.');
  if (end == std::string::npos) end = text.size();
  constexpr std::size_t kGroup = 3;
  // Built afresh rather than with std::string::insert, which GCC 12 at -O3 flags (a false
  // -Werror=restrict in its inlined memcpy).
  std::string grouped = text.substr(0, sign);
  for (std::size_t i = sign; i < end; ++i) {
    if (i > sign && (end - i) % kGroup == 0) grouped += ',';
    grouped += text[i];
  }
  grouped += text.substr(end);
  text = std::move(grouped);
}

}  // namespace

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string svg_number(double value, std::string_view field) {
  if (!std::isfinite(value)) throw Error(std::string(field), "got " + number_text(value), "a finite number");
  const double rounded = std::round(value * kSvgResolution) / kSvgResolution;
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.1f", rounded);
  std::string text = buffer;
  trim_fraction(text);
  if (text == "-0") text = "0";
  return text;
}

std::string display_number(double value, int significant_digits, bool thousands_separators) {
  if (!std::isfinite(value)) return "n/a";
  if (significant_digits < 1 || significant_digits > kMaxSignificantDigits)
    throw Error("significant_digits", "got " + std::to_string(significant_digits),
                "an integer from 1 to " + std::to_string(kMaxSignificantDigits));
  char buffer[64];
  const double magnitude = std::fabs(value);
  if (value != 0.0 && (magnitude < kPlainMin || magnitude >= kPlainMax)) {
    std::snprintf(buffer, sizeof buffer, "%.*e", significant_digits - 1, value);
    std::string text = buffer;
    const std::size_t e = text.find('e');
    std::string mantissa = text.substr(0, e);
    trim_fraction(mantissa);
    return mantissa + text.substr(e);
  }
  // Round to the significant digits first, then print with just enough decimals.
  const int exponent = value == 0.0 ? 0 : static_cast<int>(std::floor(std::log10(magnitude)));
  const int decimals = std::max(0, significant_digits - 1 - exponent);
  const double scale = std::pow(10.0, significant_digits - 1 - exponent);
  const double rounded = std::round(value * scale) / scale;
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, rounded);
  std::string text = buffer;
  trim_fraction(text);
  if (text == "-0") text = "0";
  if (thousands_separators) insert_thousands_separators(text);
  return text;
}

}  // namespace tessera::report
