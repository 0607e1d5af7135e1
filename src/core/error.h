// tessera::Error: the one exception type for invalid input. It names the offending field and the
// values that would have been accepted, so the CLI can print one actionable line and exit 2.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tessera {

namespace error_text {
// Length of the well-formed UTF-8 sequence starting at s[i] (RFC 3629 §4: no overlongs, no
// surrogates, at most U+10FFFF), or 0 when the bytes there are not one.
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const auto continuation = [&](std::size_t k) { return k < s.size() && (byte(k) & 0xC0) == 0x80; };
  const unsigned char lead = byte(i);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // allowed range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) length = 2;
  else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;   // overlong
    if (lead == 0xED) high = 0x9F;  // UTF-16 surrogates
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;   // overlong
    if (lead == 0xF4) high = 0x8F;  // beyond U+10FFFF
  } else {
    return 0;
  }
  if (i + 1 >= s.size() || byte(i + 1) < low || byte(i + 1) > high) return 0;
  for (std::size_t k = i + 2; k < i + length; ++k)
    if (!continuation(k)) return 0;
  return length;
}
}  // namespace error_text

// `text` as one printable line of valid UTF-8: control characters (a newline inside an argument)
// and bytes that are not UTF-8 become \n, \t, \r or \xNN, so an error is always exactly one line
// and can be embedded in JSON output. Backslashes are kept, so applying it twice changes nothing.
inline std::string one_line(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const std::size_t length = error_text::utf8_sequence_length(text, i);
    constexpr unsigned char kFirstPrintable = 0x20, kDelete = 0x7F;
    if (length > 1 || (length == 1 && byte >= kFirstPrintable && byte != kDelete)) {
      out.append(text.substr(i, length));
      i += length;
      continue;
    }
    if (byte == '\n') out += "\\n";
    else if (byte == '\t') out += "\\t";
    else if (byte == '\r') out += "\\r";
    else out += std::string("\\x") + kHex[byte >> 4] + kHex[byte & 0xF];
    ++i;
  }
  return out;
}

class Error : public std::runtime_error {
 public:
  Error(std::string field, std::string problem, std::string allowed)
      : std::runtime_error(compose(field, problem, allowed)),
        field_(std::move(field)),
        problem_(std::move(problem)),
        allowed_(std::move(allowed)) {}

  const std::string& field() const noexcept { return field_; }
  // What is wrong, without the field or the allowed values: what a caller that re-raises the error
  // under a fuller field path passes on (what() would repeat both).
  const std::string& problem() const noexcept { return problem_; }
  const std::string& allowed() const noexcept { return allowed_; }

 private:
  // Every part may echo user text (a path, a key, a CSV cell): one_line keeps the message one
  // line of valid UTF-8 whatever the user typed.
  static std::string compose(const std::string& field, const std::string& problem,
                             const std::string& allowed) {
    std::string text = field + ": " + problem;
    if (!allowed.empty()) text += " (allowed: " + allowed + ")";
    return one_line(text);
  }
  std::string field_;
  std::string problem_;
  std::string allowed_;
};

}  // namespace tessera
