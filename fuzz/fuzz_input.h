// What every fuzz target shares: the input as text, a scratch file for parsers that read a path,
// and the rule a target checks. A parser may refuse input only with tessera::Error (one line, exit
// 2 in the CLI); any other exception escaping (nlohmann::json's, std::out_of_range, bad_alloc, ...)
// reaches std::terminate, which libFuzzer reports as a crash and saves the input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <string>

#include <unistd.h>

#include "core/error.h"

namespace tessera::fuzz {

inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Runs `parse`, accepting tessera::Error as a refusal; everything else escapes.
template <typename Parse>
int refused_only_with_error(Parse&& parse) {
  try {
    parse();
  } catch (const tessera::Error&) {
  }
  return 0;
}

// Writes `text` to this process's scratch file (one per target and process, so parallel runs do
// not share it) with `suffix` (".json"), and returns its path.
inline std::string scratch_file(const std::string& text, const std::string& target, const std::string& suffix) {
  const std::string path = "/tmp/tessera-fuzz-" + target + "-" + std::to_string(::getpid()) + suffix;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

// The shorthand parsers also treat an argument naming an existing file as a path: fuzzing the
// text form skips inputs that happen to name one ("/etc/passwd").
bool names_a_file(const std::string& text);

}  // namespace tessera::fuzz
