// A calibration profile (io/calibration_profile_json.h): read, then applied to its GPUs as
// --profile does (io/gpu_catalog.h, ScopedProfile), and a GPU looked up under it.
#include "fuzz_input.h"
#include "io/calibration_profile_json.h"
#include "io/gpu_catalog.h"
#include "io/json_fields.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return tessera::fuzz::refused_only_with_error([&] {
    const auto j = tessera::json_fields::parse(tessera::fuzz::as_text(data, size), "fuzz profile");
    const tessera::ScopedProfile scope(tessera::profile_from_json(j, "fuzz.json"));
    (void)tessera::find_gpu("h100-sxm-80gb");
  });
}
