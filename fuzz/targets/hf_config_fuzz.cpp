// Hugging Face config.json (--model DIR/config.json): formats/hf_config.h.
#include "formats/hf_config.h"
#include "formats/json_fields.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error([&] {
    const auto j = tessera::json_fields::parse(tessera::fuzz::as_text(data, size), "model");
    tessera::model_from_hf_config(j, "fuzz");
  });
}
