// `tessera balance --samples FILE.jsonl` (io/sample_file.h).
#include "fuzz_input.h"
#include "io/sample_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error(
      [&] { tessera::parse_sample_lines(tessera::fuzz::as_text(data, size), "samples"); });
}
