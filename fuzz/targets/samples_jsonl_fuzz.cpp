// `tessera balance --samples FILE.jsonl` (formats/sample_file.h).
#include "formats/sample_file.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error(
      [&] { tessera::parse_sample_lines(tessera::fuzz::as_text(data, size), "samples"); });
}
