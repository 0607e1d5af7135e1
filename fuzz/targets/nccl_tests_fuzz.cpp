// nccl-tests output (formats/nccl_tests.h), read with the rank lines or with a given 2x8 shape.
#include "formats/nccl_tests.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = tessera::fuzz::as_text(data, size);
  tessera::fuzz::refused_only_with_error([&] { (void)tessera::parse_nccl_tests(text, "fuzz.txt"); });
  return tessera::fuzz::refused_only_with_error(
      [&] { (void)tessera::parse_nccl_tests(text, "fuzz.txt", tessera::NcclShape{2, 8}); });
}
