// Megatron-LM arguments read back into a plan (formats/megatron_args.h): the input split at
// whitespace, as a shell would split a launch line.
#include <sstream>
#include <vector>

#include "fixed_setting.h"
#include "formats/megatron_args.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream words(tessera::fuzz::as_text(data, size));
  std::vector<std::string> args;
  for (std::string word; words >> word;) args.push_back(word);
  return tessera::fuzz::refused_only_with_error([&] {
    tessera::plan_from_megatron_args(args, tessera::fuzz::fuzz_model(), tessera::fuzz::fuzz_cluster());
  });
}
