// Tessera model JSON (--model FILE.json, data/models/*.json): formats/model_json.h.
#include "formats/json_fields.h"
#include "formats/model_json.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error([&] {
    const auto j = tessera::json_fields::parse(tessera::fuzz::as_text(data, size), "model");
    tessera::model_from_json(j, "model");
  });
}
