// A default that changes the answer is said, never silent (issue 32): without --seq the sequence
// is the model's whole context (131,072 tokens for a Llama 3.1 config: a step far longer than at
// 4,096), so `plan` says so on its first stderr line, and --json / --emit stay whole on stdout.
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_process.h"

namespace {

using namespace tessera::testing;

class StatedDefaults : public CliScratchTest {
 protected:
  // Llama 3.1 8B's config.json: Llama 3 8B's shape with max_position_embeddings 131072.
  std::string llama31_8b() {
    nlohmann::json j = nlohmann::json::parse(
        read_file(std::filesystem::path(TESSERA_SOURCE_DIR) / "tests" / "fixtures" / "hf" / "llama-3-8b.json"));
    j["max_position_embeddings"] = 131072;
    return file("Llama-3.1-8B/config.json", j.dump()).string();
  }
};

std::string first_line(const std::string& text) { return text.substr(0, text.find('\n')); }

TEST_F(StatedDefaults, PlanWithoutSeqSaysTheContextItAssumed) {
  const RunResult r = run_tessera(dir_, {"plan", "--quiet", "--model", llama31_8b(), "--cluster", "h100:8", "--gbs",
                                         "8", "--top", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(first_line(r.err), "note: --seq not given: 131072 tokens, the model's context (pass --seq to choose)");
  EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
}

TEST_F(StatedDefaults, PlanWithSeqSaysNothing) {
  const RunResult r = run_tessera(dir_, {"plan", "--quiet", "--model", llama31_8b(), "--cluster", "h100:8", "--gbs",
                                         "8", "--seq", "4096", "--top", "1"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(r.err, "");
}

TEST_F(StatedDefaults, SeqZeroIsRefusedNotTheDefault) {
  expect_error_naming(run_tessera(dir_, {"plan", "--model", llama31_8b(), "--cluster", "h100:8", "--gbs", "8",
                                         "--seq", "0"}),
                      "--seq");
}

TEST_F(StatedDefaults, MultimodalPlanWithoutSeqSaysTheMixLength) {
  const RunResult r = run_tessera(dir_, {"plan", "--quiet", "--model", "qwen2-vl-7b", "--cluster", "h100:64", "--gbs",
                                         "256", "--top", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_EQ(first_line(r.err).rfind("note: --seq not given: ", 0), 0u) << r.err;
  EXPECT_NE(first_line(r.err).find(" tokens, the "), std::string::npos) << r.err;
  EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
}

}  // namespace
