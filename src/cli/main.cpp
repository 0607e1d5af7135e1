// The tessera command: dispatches to one file per subcommand. Errors: one line on stderr, exit 2.
#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/subcommands.h"
#include "core/error.h"

int main(int argc, char** argv) {
  CLI::App app{"Tessera: plan and predict LLM training on GPU clusters"};
  app.require_subcommand(1);
  tessera::cli::CommandRegistry commands;
  tessera::cli::register_all(app, commands);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return tessera::cli::kExitUsage;
  }
  try {
    return commands.run_selected();
  } catch (const tessera::Error& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return tessera::cli::kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return tessera::cli::kExitUsage;
  }
}
