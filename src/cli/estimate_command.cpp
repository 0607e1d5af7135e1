#include "cli/subcommands.h"
namespace tessera::cli {
void register_estimate(CLI::App&, CommandRegistry&) {}
}
