// --plan FILE.json: the shorthand's keys as JSON, or `tessera plan --emit json`'s document (plan
// nested under "plan"), through load_plan's file branch (formats/plan_text.h).
#include "fixed_setting.h"
#include "formats/plan_text.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = tessera::fuzz::scratch_file(tessera::fuzz::as_text(data, size), "plan", ".json");
  return tessera::fuzz::refused_only_with_error(
      [&] { tessera::load_plan(path, tessera::fuzz::fuzz_model(), tessera::fuzz::fuzz_cluster()); });
}
