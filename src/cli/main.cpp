// The tessera command: runs the command line in-process (cli/command_line.h) with the terminal as
// its output; the progress bar reaches stderr as it is drawn. Errors: one line on stderr, exit 2.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command_line.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  auto write_to = [](std::FILE* stream) {
    return [stream](std::string_view text) {
      std::fwrite(text.data(), 1, text.size(), stream);
      std::fflush(stream);
    };
  };
  return tessera::cli::run_tessera(args, write_to(stdout), write_to(stderr));
}
