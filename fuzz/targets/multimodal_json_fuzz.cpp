// Multimodal model JSON (data/multimodal/*.json): formats/multimodal_json.h.
#include "catalog/model_source.h"
#include "formats/json_fields.h"
#include "formats/multimodal_json.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error([&] {
    const auto j = tessera::json_fields::parse(tessera::fuzz::as_text(data, size), "model");
    tessera::multimodal_from_json(j, tessera::load_model, "model");
  });
}
