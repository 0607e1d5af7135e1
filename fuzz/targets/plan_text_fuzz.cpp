// --plan shorthand "tp=8,pp=2,gbs=512,..." (formats/plan_text.h) and --fix "tp=8,pp=2"
// (formats/plan_constraints_text.h parse_constraints): key=value lists.
#include "fixed_setting.h"
#include "formats/plan_constraints_text.h"
#include "formats/plan_text.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = tessera::fuzz::as_text(data, size);
  if (tessera::fuzz::names_a_file(text)) return 0;
  tessera::fuzz::refused_only_with_error(
      [&] { tessera::load_plan(text, tessera::fuzz::fuzz_model(), tessera::fuzz::fuzz_cluster()); });
  return tessera::fuzz::refused_only_with_error([&] { tessera::parse_constraints(text); });
}
