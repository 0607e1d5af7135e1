// `tessera simulate --costs FILE.json` (cli/simulate_command.cpp): its reader is part of the
// command, so the target runs the command, built as run_tessera builds it but without run_tessera's
// catch-all (which would turn any exception into an error line and hide it).
#include <string_view>

#include "cli/subcommands.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = tessera::fuzz::scratch_file(tessera::fuzz::as_text(data, size), "costs", ".json");
  const auto discard = [](std::string_view) {};
  CLI::App app;
  tessera::cli::CommandRegistry commands{tessera::cli::CommandOutput{discard, discard}};
  tessera::cli::register_simulate(app, commands);
  app.parse(std::vector<std::string>{"--json", path, "--costs", "simulate"});  // CLI11 reads them last first
  return tessera::fuzz::refused_only_with_error([&] { commands.run_selected(); });
}
