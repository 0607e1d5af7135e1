// --data: a data mix JSON (distributions) and a JSONL sample file (io/data_mix_json.h), each
// input read both ways.
#include "fuzz_input.h"
#include "io/data_mix_json.h"
#include "io/json_fields.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = tessera::fuzz::as_text(data, size);
  tessera::fuzz::refused_only_with_error(
      [&] { tessera::data_mix_from_json(tessera::json_fields::parse(text, "data"), "data"); });
  return tessera::fuzz::refused_only_with_error([&] { tessera::data_mix_from_jsonl(text, "data"); });
}
