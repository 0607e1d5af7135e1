// GEMM sweep CSV (formats/gemm_sweep.h).
#include "formats/gemm_sweep.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error(
      [&] { (void)tessera::parse_gemm_sweep(tessera::fuzz::as_text(data, size), "fuzz.csv"); });
}
