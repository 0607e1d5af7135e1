// The text of a training-log fixture (tests/fixtures/logs/, sources in its SOURCES.md).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace tessera::testing {

inline std::string log_fixture(const std::string& name) {
  std::ifstream in(std::string(TESSERA_SOURCE_DIR) + "/tests/fixtures/logs/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace tessera::testing
