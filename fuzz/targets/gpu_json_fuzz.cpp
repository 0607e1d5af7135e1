// --gpu-file: one GPU object, a list, or {"gpus": [...]} (io/gpu_json.h), parsed without
// registering (registration is global state shared by every input).
#include "fuzz_input.h"
#include "io/gpu_json.h"
#include "io/json_fields.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error([&] {
    const auto j = tessera::json_fields::parse(tessera::fuzz::as_text(data, size), "gpu-file");
    tessera::gpus_from_json(j, "fuzz");
  });
}
