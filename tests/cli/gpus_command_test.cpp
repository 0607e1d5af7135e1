// `tessera gpus`: the --json document is the GPU file format (saved, it reads back to the
// identical catalog), and the table lists every GPU with its family. The global --gpu-file: the
// example B200-like file lists as custom, reads back, and plans llama3-70b end to end exactly as
// the catalog B200 (the same figures); a bad file is one error line naming the field.
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "catalog/gpu_catalog.h"
#include "cli_process.h"
#include "formats/json_fields.h"

namespace {

using namespace tessera::testing;

class GpusCommand : public CliScratchTest {
 protected:
  GpusCommand() { command_ = {"gpus"}; }
};

TEST_F(GpusCommand, JsonSavedToAFileReadsBackToTheCatalog) {
  const RunResult r = run({"--json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto path = file("gpus.json", r.out);
  const auto document = tessera::json_fields::parse_file(path.string(), "test");
  EXPECT_EQ(document.at("schema_version").get<int>(), 1);
  EXPECT_EQ(tessera::gpus_from_json(document, "a test"), tessera::gpu_catalog());
}

TEST_F(GpusCommand, TableListsEveryGpuWithItsFamily) {
  const RunResult r = run({});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  for (const auto& g : tessera::gpu_catalog()) {
    const auto line_start = r.out.find("\n" + g.key + " ");
    ASSERT_NE(line_start, std::string::npos) << g.key << "\n" << r.out;
    const std::string line = r.out.substr(line_start + 1, r.out.find('\n', line_start + 1) - line_start - 1);
    EXPECT_NE(line.find(" " + g.family + " "), std::string::npos) << line;
  }
}

const std::string kExample = std::string(TESSERA_SOURCE_DIR) + "/examples/gpus/b200-like.json";

TEST_F(GpusCommand, GpuFileJoinsTheListAndReadsBack) {
  const RunResult r = run({"--json", "--gpu-file", kExample});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const auto document = nlohmann::json::parse(r.out);
  const auto& last = document.at("gpus").back();
  EXPECT_EQ(last.at("key"), "my-b200");
  EXPECT_EQ(last.at("family"), "custom");
  // The printed list, catalog and user GPU, is itself a valid --gpu-file that changes nothing.
  const auto saved = file("all.json", r.out);
  const RunResult again = run({"--json", "--gpu-file", saved.string()});
  ASSERT_EQ(again.exit_code, 0) << describe(again);
  EXPECT_EQ(nlohmann::json::parse(again.out), document);
}

class PlanWithGpuFile : public CliScratchTest {};

nlohmann::json best_plan(const RunResult& r) {
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  const auto document = nlohmann::json::parse(r.out);
  EXPECT_FALSE(document.at("plans").empty());
  return document.at("plans").at(0);
}

TEST_F(PlanWithGpuFile, TheB200LikeFilePlansLikeTheCatalogB200) {
  const std::vector<std::string> job = {"--model", "llama3-70b", "--gbs", "512", "--seq", "8192", "--json"};
  std::vector<std::string> custom = {"plan", "--gpu-file", kExample, "--cluster", "my-b200:64"};
  std::vector<std::string> catalog = {"plan", "--cluster", "b200:64"};
  custom.insert(custom.end(), job.begin(), job.end());
  catalog.insert(catalog.end(), job.begin(), job.end());
  const auto mine = best_plan(run(custom));
  const auto reference = best_plan(run(catalog));
  EXPECT_TRUE(mine.at("fits").get<bool>());
  EXPECT_DOUBLE_EQ(mine.at("iteration_time_s").get<double>(), reference.at("iteration_time_s").get<double>());
}

// Issue 12: the custom GPU's output says its efficiencies are assumed (the file names no family,
// and no validation run has the custom family).
TEST_F(PlanWithGpuFile, TheTextSaysTheCustomGpusEfficienciesAreAssumed) {
  const RunResult r = run({"plan", "--gpu-file", kExample, "--cluster", "my-b200:64", "--model", "llama3-70b",
                           "--gbs", "512", "--seq", "8192"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("my-b200 efficiencies assumed"), std::string::npos) << r.out;
}

TEST_F(PlanWithGpuFile, ABadGpuFileIsOneLineNamingTheField) {
  const auto bad = file("bad.json", R"({"key": "x", "bf16_tflops": 100})");
  const RunResult r = run({"gpus", "--gpu-file", bad.string()});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_TRUE(r.out.empty()) << describe(r);
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << describe(r);
  EXPECT_NE(r.err.find("gpu.x.hbm_gib"), std::string::npos) << describe(r);
}

}  // namespace
