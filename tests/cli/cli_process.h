// Running the real `tessera` binary from a test: under `timeout 60` (a hung process is killed),
// stdin from /dev/null, stdout and stderr captured through files in the test's scratch folder.
#pragma once

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

extern char** environ;

namespace tessera::testing {

struct RunResult {
  int exit_code = -1;  // the binary's exit status, when it exited
  int signal = 0;      // the signal that ended it, when one did
  bool timed_out = false;
  std::string out, err;
};

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

inline std::string describe(const RunResult& r) {
  return "exit=" + std::to_string(r.exit_code) + " signal=" + std::to_string(r.signal) +
         (r.timed_out ? " TIMED OUT" : "") + "\n--- stdout ---\n" + r.out.substr(0, 2000) + "\n--- stderr ---\n" +
         r.err.substr(0, 4000);
}

// Runs `timeout 60 tessera ARGS...` (no shell, so no quoting) with output files in `dir`.
inline RunResult run_tessera(const std::filesystem::path& dir, const std::vector<std::string>& args) {
  const std::filesystem::path out_path = dir / "stdout.txt", err_path = dir / "stderr.txt";
  std::vector<std::string> argv_text = {"timeout", "--kill-after=10", "60", TESSERA_BINARY};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int spawn_rc = posix_spawnp(&pid, "timeout", &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  RunResult r;
  if (spawn_rc != 0) {
    ADD_FAILURE() << "posix_spawnp(timeout) failed: " << std::strerror(spawn_rc);
    return r;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);  // timeout re-raises the signal that killed the binary
  } else if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
    if (r.exit_code == 124 || r.exit_code == 137) r.timed_out = true;
    else if (r.exit_code > 128) r.signal = r.exit_code - 128;  // a shell-style report of a signal
  }
  r.out = read_file(out_path);
  r.err = read_file(err_path);
  return r;
}

inline bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// `word` occurs in `text` with no word character on either side.
inline bool contains_word(const std::string& text, const std::string& word) {
  for (auto pos = text.find(word); pos != std::string::npos; pos = text.find(word, pos + 1)) {
    const bool left = pos == 0 || !is_word_char(text[pos - 1]);
    const std::size_t end = pos + word.size();
    const bool right = end >= text.size() || !is_word_char(text[end]);
    if (left && right) return true;
  }
  return false;
}

// A CLI test whose files live in a scratch folder of its own, named after the test and the process
// (ctest runs the tests of one file in parallel processes), removed afterwards.
// A successful command's stderr: nothing but the defaults it states (cli/subcommands.h
// DefaultNote), one "note: <flag> not given: ..." line each.
inline bool only_stated_defaults(const std::string& err) {
  std::size_t start = 0;
  while (start < err.size()) {
    const std::size_t end = err.find('\n', start);
    if (end == std::string::npos) return false;
    const std::string line = err.substr(start, end - start);
    if (line.rfind("note: ", 0) != 0 || line.find(" not given: ") == std::string::npos) return false;
    start = end + 1;
  }
  return true;
}

class CliScratchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("tessera_" + std::string(info->test_suite_name()) + "_" + std::to_string(::getpid()) + "_" + info->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  // Writes `text` to a file of the scratch folder and returns its path.
  std::filesystem::path file(const std::string& name, const std::string& text) {
    const std::filesystem::path path = dir_ / name;
    std::filesystem::create_directories(path.parent_path());
    std::ofstream out(path, std::ios::binary);
    out << text;
    EXPECT_TRUE(out.good()) << "cannot write " << path;
    return path;
  }
  // A bad input's answer: no signal, exit 2, nothing on stdout, one line on stderr naming `field`.
  void expect_error_naming(const RunResult& r, const std::string& field) {
    EXPECT_EQ(r.signal, 0) << describe(r);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(r.out.empty()) << describe(r);
    ASSERT_FALSE(r.err.empty()) << describe(r);
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line\n" << describe(r);
    EXPECT_NE(r.err.find(field), std::string::npos) << "should name " << field << "\n" << describe(r);
  }
  // Runs `tessera <command_> ARGS...` (command_: the subcommand words a suite sets, if any).
  RunResult run(const std::vector<std::string>& args) {
    std::vector<std::string> all = command_;
    all.insert(all.end(), args.begin(), args.end());
    return run_tessera(dir_, all);
  }
  // Runs with --json and returns the parsed document, after checking exit 0 and a clean stderr.
  nlohmann::json run_json(std::vector<std::string> args) {
    args.push_back("--json");
    const RunResult r = run(args);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    EXPECT_TRUE(only_stated_defaults(r.err)) << describe(r);
    try {
      return nlohmann::json::parse(r.out);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "stdout is not JSON: " << e.what() << "\n" << describe(r);
      return nlohmann::json::object();
    }
  }
  std::filesystem::path dir_;
  std::vector<std::string> command_;
};

}  // namespace tessera::testing
