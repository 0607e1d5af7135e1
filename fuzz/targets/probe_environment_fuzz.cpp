// A probe folder's environment.json (formats/probe_environment.h).
#include "formats/probe_environment.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error(
      [&] { (void)tessera::parse_probe_environment(tessera::fuzz::as_text(data, size), "environment.json"); });
}
