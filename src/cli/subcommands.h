// Each subcommand lives in its own file and registers itself here.
#pragma once

#include <exception>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "core/error.h"

namespace tessera::cli {

inline constexpr int kExitUsage = 2;  // bad input: one line on stderr

// The built-in default job of `estimate` and `plan`: GPT-3 175B on 1,024 A100 (the SC'21 run).
inline constexpr const char* kDefaultModel = "gpt3-175b";
inline constexpr const char* kDefaultCluster = "a100-sxm-80gb:1024";

// Whether the command line gave `option` (a flag or an option with its value).
inline bool given(const CLI::App& sub, const std::string& option) { return sub.get_option(option)->count() > 0; }

// An option that means something only with another is refused without it, so no flag is silently
// ignored (`calibrate --draws 5` without --held-out).
inline void require_prerequisite(const CLI::App& sub, const std::string& option, const std::string& prerequisite) {
  if (given(sub, option) && !given(sub, prerequisite))
    throw Error(option, "has no effect without " + prerequisite, prerequisite + " with it, or leave " + option + " out");
}

// Two options that cannot be used together (one would be silently ignored).
inline void require_apart(const CLI::App& sub, const std::string& option, const std::string& other) {
  if (given(sub, option) && given(sub, other))
    throw Error(option, "cannot be used with " + other + " (one of them would be ignored)", "one of the two");
}

// Where a command's text goes: the terminal for the binary, strings for the Python API
// (cli/command_line.h). Commands print through it, never to stdout / stderr directly, so one
// process can run many commands, each with its own output.
class CommandOutput {
 public:
  using Sink = std::function<void(std::string_view)>;
  CommandOutput(Sink out, Sink err, bool err_is_terminal = false)
      : out_(std::move(out)), err_(std::move(err)), err_is_terminal_(err_is_terminal) {}

  // A progress bar redraws its line with '\r': only where a person watches it (issue 32: a log
  // file or a pipe got every frame).
  bool err_is_terminal() const { return err_is_terminal_; }

  template <typename... T>
  void print(fmt::format_string<T...> format, T&&... args) const {
    out_(fmt::format(format, std::forward<T>(args)...));
  }
  template <typename... T>
  void print_error(fmt::format_string<T...> format, T&&... args) const {
    err_(fmt::format(format, std::forward<T>(args)...));
  }

 private:
  Sink out_, err_;
  bool err_is_terminal_ = false;
};

// A default that changes the answer is said, never silent (issue 32): one line on stderr, so
// --json and --emit output on stdout stay whole, printed when the command succeeds (an error
// stays the only line on stderr). `value` says what was assumed and why:
// "note: --seq not given: 131072 tokens, the model's context (pass --seq to choose)".
class DefaultNote {
 public:
  explicit DefaultNote(const CommandOutput& io) : io_(io), exceptions_(std::uncaught_exceptions()) {}
  DefaultNote(const DefaultNote&) = delete;
  DefaultNote& operator=(const DefaultNote&) = delete;
  ~DefaultNote() {
    if (flag_.empty() || std::uncaught_exceptions() != exceptions_) return;
    io_.print_error("note: {} not given: {} (pass {} to choose)\n", flag_, value_, flag_);
  }
  void set(std::string flag, std::string value) {
    flag_ = std::move(flag);
    value_ = std::move(value);
  }

 private:
  const CommandOutput& io_;
  const int exceptions_;
  std::string flag_, value_;
};

// Subcommands register a callback; run_tessera runs the one CLI11 parsed, outside CLI11's handlers
// so tessera::Error maps to exit 2 uniformly. The registry owns the output its commands print to.
class CommandRegistry {
 public:
  explicit CommandRegistry(CommandOutput output) : output_(std::move(output)) {}
  CommandRegistry(const CommandRegistry&) = delete;  // commands hold a reference to output_
  CommandRegistry& operator=(const CommandRegistry&) = delete;

  const CommandOutput& output() const { return output_; }
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
  CommandOutput output_;
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
void register_calibrate(CLI::App& app, CommandRegistry& commands);
void register_data_serve(CLI::App& app, CommandRegistry& commands);

inline void register_all(CLI::App& app, CommandRegistry& commands) {
  register_models(app, commands);
  register_gpus(app, commands);
  register_estimate(app, commands);
  register_validate(app, commands);
  register_plan(app, commands);
  register_simulate(app, commands);
  register_adapt(app, commands);
  register_balance(app, commands);
  register_calibrate(app, commands);
  register_data_serve(app, commands);
}

}  // namespace tessera::cli
