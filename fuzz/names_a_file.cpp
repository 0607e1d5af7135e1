#include <filesystem>
#include <system_error>

#include "fuzz_input.h"

namespace tessera::fuzz {

bool names_a_file(const std::string& text) {
  std::error_code ec;
  return std::filesystem::exists(text, ec);
}

}  // namespace tessera::fuzz
