// A calibration profile (formats/calibration_profile_json.h): read, then applied to its GPUs as
// --profile does (catalog/gpu_catalog.h, ScopedProfile), and a GPU looked up under it.
#include "catalog/gpu_catalog.h"
#include "formats/calibration_profile_json.h"
#include "formats/json_fields.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error([&] {
    const auto j = tessera::json_fields::parse(tessera::fuzz::as_text(data, size), "fuzz profile");
    const tessera::ScopedProfile scope(tessera::profile_from_json(j, "fuzz.json"));
    (void)tessera::find_gpu("h100-sxm-80gb");
  });
}
