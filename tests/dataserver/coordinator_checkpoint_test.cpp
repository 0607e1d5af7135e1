// The coordinator's checkpoint (dataserver/coordinator_checkpoint.h): what is written is read back
// whole (settings and cursors), a rewrite replaces the file atomically, and a foreign, damaged or
// other-version file is refused naming the field.
#include "dataserver/coordinator_checkpoint.h"

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

namespace tessera {
namespace {

namespace fs = std::filesystem;
using testing::thrown_field;

class CheckpointFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("tessera_checkpoint_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".json")).string();
  }
  void TearDown() override { fs::remove(path_); }
  std::string path_;
};

CoordinatorCheckpoint example() {
  CoordinatorCheckpoint c;
  c.index = "/data/index.jsonl";
  c.settings.ranks = 3;
  c.settings.microbatches = 4;
  c.settings.max_tokens = 8192;
  c.settings.method = BalanceMethod::lpt;
  c.settings.seed = 42;
  c.settings.epoch = 2;
  c.settings.pipeline_stages = 4;
  c.cursors = {5, 0, 12};
  return c;
}

TEST_F(CheckpointFile, WhatIsWrittenIsReadBack) {
  write_coordinator_checkpoint(path_, example());
  CoordinatorCheckpoint later = example();
  later.cursors = {6, 1, 12};
  write_coordinator_checkpoint(path_, later);  // replaces the first
  const CoordinatorCheckpoint c = read_coordinator_checkpoint(path_);
  EXPECT_EQ(c.index, "/data/index.jsonl");
  EXPECT_EQ(c.settings.ranks, 3);
  EXPECT_EQ(c.settings.microbatches, 4);
  EXPECT_EQ(c.settings.max_tokens, 8192);
  EXPECT_EQ(c.settings.method, BalanceMethod::lpt);
  EXPECT_EQ(c.settings.seed, 42u);
  EXPECT_EQ(c.settings.epoch, 2);
  EXPECT_EQ(c.settings.pipeline_stages, 4);
  EXPECT_EQ(c.cursors, (std::vector<std::int64_t>{6, 1, 12}));
  EXPECT_FALSE(fs::exists(path_ + ".tmp"));
}

TEST_F(CheckpointFile, ForeignOrDamagedFilesAreRefusedByField) {
  auto read_text = [&](const std::string& text) {
    std::ofstream(path_) << text;
    return thrown_field([&] { read_coordinator_checkpoint(path_); });
  };
  write_coordinator_checkpoint(path_, example());
  std::ifstream in(path_);
  const std::string good((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = good;
    s.replace(s.find(from), from.size(), to);
    return s;
  };
  EXPECT_EQ(read_text(replaced("tessera-data-coordinator", "something-else")), "checkpoint.format");
  EXPECT_EQ(read_text(replaced("\"protocol_version\":1", "\"protocol_version\":7")), "checkpoint.protocol_version");
  EXPECT_EQ(read_text(replaced("[5,0,12]", "[5,\"x\",12]")), "checkpoint.cursors[1]");
  EXPECT_EQ(read_text(replaced("\"lpt\"", "\"best\"")), "method");
  // Unparsable or missing: the field names the file.
  EXPECT_EQ(read_text("{\"format\": 1"), "checkpoint (" + path_ + ")");
  fs::remove(path_);
  EXPECT_EQ(thrown_field([&] { read_coordinator_checkpoint(path_); }).rfind("checkpoint", 0), 0u);
}

}  // namespace
}  // namespace tessera
