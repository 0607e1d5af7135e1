// The published runs ship with Tessera (issue 32): every validation CSV of ../shared/validation is
// in data/validation byte for byte (checked where ../shared is beside the checkout), every shipped
// CSV is built in under its name, and `validate` / `calibrate` find a table by a forgiving name or
// by path, with one-line errors for neither.
#include "catalog/published_runs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/thrown_field.h"
#include "core/error.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using testing::thrown_field;

const fs::path kShipped = fs::path(TESSERA_SOURCE_DIR) / "data" / "validation";
const fs::path kShared = fs::path(TESSERA_SOURCE_DIR) / ".." / "shared" / "validation";

// The message of the Error loading `name` throws, or "<no error>".
std::string load_error(const std::string& name, const std::string& field) {
  try {
    (void)load_published_runs_text(name, field);
  } catch (const Error& e) {
    return e.what();
  }
  return "<no error>";
}

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The CSVs under `root`, as paths relative to it without ".csv" ("h200/runs"), sorted.
std::vector<std::string> csv_names(const fs::path& root) {
  std::vector<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(root))
    if (entry.is_regular_file() && entry.path().extension() == ".csv")
      names.push_back(fs::relative(entry.path(), root).replace_extension().generic_string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(PublishedRuns, EverySharedTableIsShippedUnchanged) {
  if (!fs::exists(kShared)) GTEST_SKIP() << "no ../shared/validation beside the checkout";
  const auto shared = csv_names(kShared);
  ASSERT_FALSE(shared.empty());
  for (const auto& name : shared) {
    const fs::path file = name + ".csv";
    ASSERT_TRUE(fs::exists(kShipped / file)) << name << " is in ../shared/validation but not shipped";
    EXPECT_EQ(read(kShipped / file), read(kShared / file)) << name;
  }
}

TEST(PublishedRuns, EveryShippedTableIsBuiltInUnderItsName) {
  auto builtin = builtin_published_run_names();
  std::sort(builtin.begin(), builtin.end());
  EXPECT_EQ(builtin, csv_names(kShipped));
  for (const auto& name : builtin) {
    const auto table = load_published_runs_text(name, "file");
    EXPECT_EQ(table.name, name);
    EXPECT_EQ(table.text, read(kShipped / (name + ".csv"))) << name;
  }
  for (const char* name : {"public_runs", "moe_runs", "vtrain_runs", "h200/runs", "h200/memory"})
    EXPECT_NE(std::find(builtin.begin(), builtin.end(), name), builtin.end()) << name;
}

TEST(PublishedRuns, NamesAreForgivingAndAFileWins) {
  const std::string public_runs = read(kShipped / "public_runs.csv");
  EXPECT_EQ(load_published_runs_text("Public-Runs", "file").text, public_runs);
  EXPECT_EQ(load_published_runs_text("public_runs.csv", "file").text, public_runs);
  EXPECT_EQ(load_published_runs_text("h200/runs.csv", "file").name, "h200/runs");
  // A path that exists is the file, named as given.
  const fs::path moe = kShipped / "moe_runs.csv";
  const auto from_file = load_published_runs_text(moe.string(), "--runs");
  EXPECT_EQ(from_file.name, moe.string());
  EXPECT_EQ(from_file.text, read(moe));
}

TEST(PublishedRuns, AnUnknownNameOrAMissingFileIsOneLineNamingTheField) {
  try {
    (void)load_published_runs_text("public_run", "file");
    FAIL() << "no error";
  } catch (const Error& e) {
    const std::string text = e.what();
    EXPECT_EQ(e.field(), "file");
    EXPECT_NE(text.find("did you mean public_runs?"), std::string::npos) << text;
    EXPECT_NE(text.find("or a CSV path"), std::string::npos) << text;
    EXPECT_EQ(text.find('\n'), std::string::npos) << text;
  }
  // A mistyped built-in name with a '/' is not mistaken for a path: it gets the suggestion too; a
  // path near no built-in name keeps the file's own error.
  const std::string mistyped = load_error("h200/memry", "--memory");
  EXPECT_NE(mistyped.find("--memory: unknown table or file 'h200/memry'; did you mean h200/memory?"), std::string::npos)
      << mistyped;
  const std::string missing = load_error("no/such/runs.csv", "--memory");
  EXPECT_EQ(missing.find("did you mean"), std::string::npos) << missing;
  EXPECT_EQ(thrown_field([] { (void)load_published_runs_text("no/such/runs.csv", "--memory"); }), "--memory");
  EXPECT_EQ(thrown_field([] { (void)load_published_runs_text("", "--held-out"); }), "--held-out");
}

}  // namespace
}  // namespace tessera
