// --gpu-file: one GPU object, a list, or {"gpus": [...]} (formats/gpu_json.h), parsed without
// registering (registration is global state shared by every input).
#include "formats/gpu_json.h"
#include "formats/json_fields.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error([&] {
    const auto j = tessera::json_fields::parse(tessera::fuzz::as_text(data, size), "gpu-file");
    tessera::gpus_from_json(j, "fuzz");
  });
}
