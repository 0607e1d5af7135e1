// --data: a data mix JSON (distributions) and a JSONL sample file (formats/data_mix_json.h), each
// input read both ways.
#include "formats/data_mix_json.h"
#include "formats/json_fields.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = tessera::fuzz::as_text(data, size);
  tessera::fuzz::refused_only_with_error(
      [&] { tessera::data_mix_from_json(tessera::json_fields::parse(text, "data"), "data"); });
  return tessera::fuzz::refused_only_with_error([&] { tessera::data_mix_from_jsonl(text, "data"); });
}
