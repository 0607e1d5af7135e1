// Multimodal model JSON (data/multimodal/*.json): io/multimodal_json.h.
#include "fuzz_input.h"
#include "io/json_fields.h"
#include "io/multimodal_json.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error([&] {
    const auto j = tessera::json_fields::parse(tessera::fuzz::as_text(data, size), "model");
    tessera::multimodal_from_json(j, "model");
  });
}
