#include "cli/subcommands.h"
namespace tessera::cli {
void register_validate(CLI::App&, CommandRegistry&) {}
}
