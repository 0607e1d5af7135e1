#include "cli/command_line.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <sstream>

#include <fmt/core.h>

#include "catalog/gpu_catalog.h"
#include "core/error.h"

namespace tessera::cli {

namespace {

// Set by CMake (top-level CMakeLists.txt, tessera_cli): project(tessera VERSION ...) and the git
// commit at configure time, empty outside a checkout.
#ifndef TESSERA_VERSION
#define TESSERA_VERSION "unknown"
#endif
#ifndef TESSERA_GIT_COMMIT
#define TESSERA_GIT_COMMIT ""
#endif

// --gpu-file FILE: the user's GPUs join the catalog before the command runs (issue 12, item 5),
// for this command only (run_tessera's ScopedUserGpus): a later Python call without gpu_file does
// not see them, and may register a corrected file under the same key.
void register_user_gpus(const std::string& path) {
  if (!path.empty()) (void)add_user_gpus_from_file(path);
}

// CLI11's own output (help, --version) through an ostream, then into the sink.
int exit_through(const CLI::App& app, const CLI::Error& e, const CommandOutput::Sink& out,
                 const CommandOutput::Sink& err) {
  std::ostringstream out_text, err_text;
  const int code = app.exit(e, out_text, err_text);
  if (!out_text.str().empty()) out(out_text.str());
  if (!err_text.str().empty()) err(err_text.str());
  return code;
}

// Options whose value is itself a list of another program's flags ("--tensor-model-parallel-size 8").
bool takes_argument_list(const CLI::Option& option) { return option.check_name("--megatron-args"); }

// Every value an option took: one that is empty or is the next option (`--html --json` would
// write a file named "--json") is refused, so no option is silently taken as not given.
void check_option_values(const CLI::App& app) {
  for (const CLI::Option* option : app.get_options()) {
    if (option->count() == 0 || option->get_type_size() == 0) continue;  // not given, or a flag
    for (const std::string& value : option->results()) {
      if (value.empty())
        throw Error(option->get_name(), "an empty value", "a value; leave the option out for its default");
      if (value.rfind("--", 0) == 0 && !takes_argument_list(*option))
        throw Error(option->get_name(), "got '" + value + "', which is an option, not a value",
                    "a value after " + option->get_name());
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) check_option_values(*sub);
}

// CLI11's "Could not convert: --spare-nodes = 0.5" as Tessera's one line: the option, the value
// and what the option takes (from its declared type), so every flag says its allowed values.
const CLI::Option* find_option(const CLI::App& app, const std::string& name) {
  for (const CLI::Option* option : app.get_options())
    if (option->check_name(name)) return option;
  for (const CLI::App* sub : app.get_subcommands())
    if (const CLI::Option* option = find_option(*sub, name)) return option;
  return nullptr;
}

std::string conversion_error_line(const CLI::App& app, const std::string& message) {
  constexpr std::string_view kPrefix = "Could not convert: ";
  const std::size_t equals = message.find(" = ");
  if (message.rfind(kPrefix, 0) != 0 || equals == std::string::npos) return "error: " + one_line(message) + "\n";
  const std::string name = message.substr(kPrefix.size(), equals - kPrefix.size());
  const std::string value = message.substr(equals + 3);
  const CLI::Option* option = find_option(app, name);
  const std::string type = option != nullptr ? option->get_type_name() : "";
  const std::string allowed = type.find("UINT") != std::string::npos ? "a non-negative integer"
                              : type.find("INT") != std::string::npos ? "an integer"
                              : type.find("FLOAT") != std::string::npos ? "a number"
                                                                        : "a value of the option's type";
  return std::string("error: ") + Error(name, "cannot read '" + value + "'", allowed).what() + "\n";
}

// CLI11's "The following arguments were not expected: 1 --bogus" (its arguments reversed) as one
// line naming the first unknown option as typed and the options the subcommand has (issue 32).
std::string unexpected_arguments_line(const CLI::App& app, const std::vector<std::string>& args) {
  const std::vector<std::string> extras = app.remaining(true);
  std::string first;
  for (const std::string& a : args)
    if (first.empty() && a.rfind("-", 0) == 0 && std::find(extras.begin(), extras.end(), a) != extras.end()) first = a;
  if (first.empty()) first = extras.empty() ? "argument" : extras.back();
  const auto parsed = app.get_subcommands();
  const CLI::App& command = parsed.empty() ? app : *parsed.front();
  std::string allowed;
  for (const CLI::Option* option : command.get_options())
    for (const std::string& name : option->get_lnames()) allowed += (allowed.empty() ? "--" : ", --") + name;
  return std::string("error: ") +
         Error(first, "not an option of tessera " + command.get_name(), allowed.empty() ? "none" : allowed).what() +
         "\n";
}

}  // namespace

std::string project_version() { return TESSERA_VERSION; }

std::string version_text() {
  const std::string commit = TESSERA_GIT_COMMIT;
  return project_version() + (commit.empty() ? "" : " (git " + commit + ")");
}

int run_tessera(const std::vector<std::string>& args, const CommandOutput::Sink& out, const CommandOutput::Sink& err,
                bool err_is_terminal) {
  CLI::App app{"Tessera: plan and predict LLM training on GPU clusters", "tessera"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tessera " + version_text());
  std::string gpu_file, profile_file;
  app.add_option("--gpu-file", gpu_file, "GPU JSON whose GPUs join the catalog (see README); also after the subcommand");
  app.add_option("--profile", profile_file,
                 "Calibration profile (tessera calibrate -o FILE) applied to its GPUs; also after the subcommand");
  app.fallthrough();  // subcommands (created below) inherit it: --gpu-file after the subcommand reaches the app
  CommandRegistry commands{CommandOutput{out, err, err_is_terminal}};
  register_all(app, commands);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    return exit_through(app, e, out, err);
  } catch (const CLI::CallForAllHelp& e) {
    return exit_through(app, e, out, err);
  } catch (const CLI::CallForVersion& e) {
    return exit_through(app, e, out, err);
  } catch (const CLI::ConversionError& e) {
    err(conversion_error_line(app, e.what()));
    return kExitUsage;
  } catch (const CLI::ExtrasError&) {
    err(unexpected_arguments_line(app, args));
    return kExitUsage;
  } catch (const CLI::ParseError& e) {  // CLI11 echoes the argument: keep it one line too
    err(fmt::format("error: {}\n", one_line(e.what())));
    return kExitUsage;
  }
  try {
    check_option_values(app);
    const ScopedUserGpus user_gpus;
    register_user_gpus(gpu_file);
    std::optional<ScopedProfile> profile;
    if (!profile_file.empty()) profile.emplace(load_profile(profile_file));
    return commands.run_selected();
  } catch (const std::exception& e) {  // tessera::Error names the field; others say what failed
    // Error's text is one line already (core/error.h); other exceptions may echo a control
    // character or a byte that is not UTF-8, and every error is one line of text.
    err(fmt::format("error: {}\n", one_line(e.what())));
    return kExitUsage;
  }
}

int run_tessera(const std::vector<std::string>& args, std::string& out, std::string& err) {
  return run_tessera(
      args, [&out](std::string_view text) { out.append(text); }, [&err](std::string_view text) { err.append(text); });
}

}  // namespace tessera::cli
