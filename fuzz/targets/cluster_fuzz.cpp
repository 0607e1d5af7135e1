// --cluster: a cluster JSON or pools JSON file, and the shorthand "h100:64+a100:128", both through
// load_mixed_cluster (catalog/gpu_catalog.h), the entry point `tessera plan` uses.
#include "catalog/gpu_catalog.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text = tessera::fuzz::as_text(data, size);
  tessera::fuzz::refused_only_with_error(
      [&] { tessera::load_mixed_cluster(tessera::fuzz::scratch_file(text, "cluster", ".json")); });
  if (tessera::fuzz::names_a_file(text)) return 0;
  return tessera::fuzz::refused_only_with_error([&] { tessera::load_mixed_cluster(text); });
}
