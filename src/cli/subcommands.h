// Each subcommand lives in its own file and registers itself here.
#pragma once

#include <functional>
#include <vector>

#include <CLI/CLI.hpp>

namespace tessera::cli {

inline constexpr int kExitUsage = 2;  // bad input: one line on stderr

// Subcommands register a callback; main() runs the one CLI11 parsed, outside CLI11's handlers so
// tessera::Error maps to exit 2 uniformly.
class CommandRegistry {
 public:
  void add(CLI::App* sub, std::function<int()> run) { entries_.push_back({sub, std::move(run)}); }
  int run_selected() const {
    for (const auto& e : entries_)
      if (e.sub->parsed()) return e.run();
    return kExitUsage;
  }

 private:
  struct Entry {
    CLI::App* sub;
    std::function<int()> run;
  };
  std::vector<Entry> entries_;
};

void register_models(CLI::App& app, CommandRegistry& commands);
void register_gpus(CLI::App& app, CommandRegistry& commands);
void register_estimate(CLI::App& app, CommandRegistry& commands);
void register_validate(CLI::App& app, CommandRegistry& commands);
void register_plan(CLI::App& app, CommandRegistry& commands);
void register_simulate(CLI::App& app, CommandRegistry& commands);
void register_adapt(CLI::App& app, CommandRegistry& commands);
void register_balance(CLI::App& app, CommandRegistry& commands);

inline void register_all(CLI::App& app, CommandRegistry& commands) {
  register_models(app, commands);
  register_gpus(app, commands);
  register_estimate(app, commands);
  register_validate(app, commands);
  register_plan(app, commands);
  register_simulate(app, commands);
  register_adapt(app, commands);
  register_balance(app, commands);
}

}  // namespace tessera::cli
