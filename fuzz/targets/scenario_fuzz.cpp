// `tessera adapt simulate --scenario FILE.json` (formats/scenario_file.h).
#include "formats/json_fields.h"
#include "formats/scenario_file.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error([&] {
    const auto j = tessera::json_fields::parse(tessera::fuzz::as_text(data, size), "scenario");
    tessera::scenario_from_json(j, "scenario");
  });
}
