#include "cli/subcommands.h"
namespace tessera::cli {
void register_gpus(CLI::App&, CommandRegistry&) {}
}
