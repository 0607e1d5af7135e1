// The tessera command: runs the command line in-process (cli/command_line.h) with the terminal as
// its output; the progress bar reaches stderr as it is drawn. Errors: one line on stderr, exit 2.
#include <unistd.h>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli/command_line.h"

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  // A write that fails (a full disk, a closed pipe, > /dev/full) is remembered: an answer that did
  // not reach its reader is an error, not exit 0.
  bool stdout_failed = false;
  auto write_to = [](std::FILE* stream, bool* failed) {
    return [stream, failed](std::string_view text) {
      const bool ok = std::fwrite(text.data(), 1, text.size(), stream) == text.size() && std::fflush(stream) == 0;
      if (!ok && failed != nullptr) *failed = true;
    };
  };
  const bool err_is_terminal = ::isatty(::fileno(stderr)) == 1;
  const int rc =
      tessera::cli::run_tessera(args, write_to(stdout, &stdout_failed), write_to(stderr, nullptr), err_is_terminal);
  if (std::fflush(stdout) != 0 || std::ferror(stdout) != 0) stdout_failed = true;
  if (stdout_failed) {
    std::fputs("error: stdout: the output could not be written (allowed: a writable output)\n", stderr);
    return 2;
  }
  return rc;
}
