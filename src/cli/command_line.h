// The tessera command line, run in-process on an argument vector: what main() runs, and what the
// Python package calls (tessera.plan / estimate / validate return the documents --json prints, by
// construction). Each call builds its own CLI11 App and options, so calls share no state and may
// run on several threads at once.
#pragma once

#include <string>
#include <vector>

#include "cli/subcommands.h"

namespace tessera::cli {

// `args` without the program name, e.g. {"plan", "--model", "llama3-70b", "--json"}. Returns the
// exit status: 0, or kExitUsage after one "error: ..." line to `err` (help and --version go to
// `out` with 0).
int run_tessera(const std::vector<std::string>& args, const CommandOutput::Sink& out, const CommandOutput::Sink& err,
                bool err_is_terminal = false);

// The same, collecting the text.
int run_tessera(const std::vector<std::string>& args, std::string& out, std::string& err);

// "0.1.0" from CMake's project(), with " (git abc123def456)" when configured inside a git checkout.
std::string version_text();
std::string project_version();  // "0.1.0" alone (Python's __version__)

}  // namespace tessera::cli
