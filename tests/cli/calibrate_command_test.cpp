// `tessera calibrate` end to end (README "tessera calibrate"): the profile it writes changes what
// --profile commands predict and they say so; nccl-tests output moves only communication terms;
// bad inputs are one line naming the field, exit 2.
#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "calibrate/calibration_parameter.h"
#include "cli_process.h"

namespace tessera {
namespace {

using testing::CliScratchTest;
using testing::describe;
using testing::RunResult;

const std::string kRoot = TESSERA_SOURCE_DIR;
const std::string kFit = kRoot + "/examples/calibration/fit.csv";
const std::string kRest = kRoot + "/examples/calibration/rest.csv";
const std::string kFixtures = kRoot + "/tests/fixtures/";

class CalibrateCommand : public CliScratchTest {
 protected:
  void SetUp() override {
    CliScratchTest::SetUp();
    command_ = {"calibrate"};
  }
};

TEST_F(CalibrateCommand, ProfileLowersTheErrorOfTheRunsNotFittedAndReportsItself) {
  const std::string profile = (dir_ / "p.json").string();
  const nlohmann::json fit = run_json({"--runs", kFit, "-o", profile});
  EXPECT_LT(fit["summary"]["median_abs_error_after_pct"].get<double>(),
            fit["summary"]["median_abs_error_before_pct"].get<double>());
  EXPECT_EQ(fit["fitted_on"]["runs"], 5);
  EXPECT_EQ(nlohmann::json::parse(testing::read_file(profile)), fit);  // -o writes what --json prints
  command_.clear();
  const nlohmann::json catalog = run_json({"validate", kRest});
  const nlohmann::json calibrated = run_json({"validate", kRest, "--profile", profile});
  EXPECT_LT(calibrated["summary"]["median_abs_error_pct"].get<double>(),
            catalog["summary"]["median_abs_error_pct"].get<double>());
  EXPECT_FALSE(catalog.contains("profile"));
  ASSERT_TRUE(calibrated.contains("profile"));
  EXPECT_EQ(calibrated["profile"]["gpus"], nlohmann::json::array({"a100-class"}));
  const RunResult text = run({"validate", kRest, "--profile", profile});
  EXPECT_NE(text.out.find("calibration profile " + profile + " applied to a100-class"), std::string::npos);
}

// --held-out --report lists every draw before the summary: the rows it fitted on (as many as
// --fit-rows), its held-out error before and after, and what it moved. A draw that moved nothing
// predicts the held-out rows as the catalog does.
TEST_F(CalibrateCommand, HeldOutReportListsEveryDrawAndWhatItMoved) {
  const RunResult r = run({"--held-out", kRest, "--fit-rows", "5", "--draws", "3", "--report"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  std::istringstream lines(r.out);
  std::string line, previous;
  int draws = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("  fitted on ", 0) == 0) {
      ++draws;
      EXPECT_EQ(std::count(line.begin(), line.end(), ','), 4) << line;  // five rows
      std::istringstream fields(previous);
      std::string group, seed, moved;
      double before = 0, after = 0;
      fields >> group >> seed >> before >> after >> moved;
      if (moved == "nothing") EXPECT_DOUBLE_EQ(before, after) << previous;
      else EXPECT_NE(previous.find(".gemm_efficiency x"), std::string::npos) << previous;
    }
    previous = line;
  }
  EXPECT_EQ(draws, 3);  // one group (GPT-h2048-L24) x 3 draws
  EXPECT_NE(r.out.find("over 3 draws: held-out |error| median"), std::string::npos);
  // Without --report, only the summary.
  EXPECT_EQ(run({"--held-out", kRest, "--fit-rows", "5", "--draws", "3"}).out.find("\n  fitted on "), std::string::npos);
}

// A GEMM sweep's dense rows travel in the profile, and a command that applies it says how many
// shapes it prices as measured (the H200's sweep, ../shared/validation/h200/gemm.csv: 33 shapes in
// bf16 and fp8 each).
TEST_F(CalibrateCommand, TheMeasuredGemmsTravelInTheProfileAndAreAnnounced) {
  const std::string profile = (dir_ / "gemm.json").string();
  const nlohmann::json fit = run_json({"--gemm", kFixtures + "probe/h200/gemm.csv", "--gpu", "h200", "-o", profile});
  ASSERT_EQ(fit["gpus"].size(), 1u);
  EXPECT_EQ(fit["gpus"][0]["measured_gemms"].size(), 66u);
  command_.clear();
  const std::vector<std::string> estimate = {"estimate", "--model", "llama3-8b", "--cluster", "h200:8", "--plan", "tp=8,mb=1,gbs=8,seq=4096", "--profile", profile};
  std::vector<std::string> as_json = estimate;
  as_json.push_back("--json");
  const nlohmann::json note = run_json(as_json)["profile"];
  EXPECT_EQ(note["measured_gemms"]["h200"], 66);
  EXPECT_NE(run(estimate).out.find("measured GEMMs priced as measured: h200 66 shapes"), std::string::npos);
}

TEST_F(CalibrateCommand, NcclTestsOutputMovesOnlyCommunicationParameters) {
  const nlohmann::json p = run_json({"--nccl", kFixtures + "bench/all_reduce_gb10_2x1.txt", "--gpu", "h100"});
  ASSERT_FALSE(p["parameters"].empty());
  for (const auto& param : p["parameters"]) {
    if (param["term"] == "communication") continue;
    EXPECT_TRUE(param["status"] == "not_identified" || param["status"] == "not_measured") << param;
    EXPECT_EQ(param["fitted"], param["catalog"]) << param;
  }
  for (const auto& [name, value] : p["gpus"][0]["parameters"].items()) {
    const CalibrationParameter* def = find_calibration_parameter(name);
    ASSERT_NE(def, nullptr) << name;
  }
}

TEST_F(CalibrateCommand, BadInputsAreOneLineNamingTheField) {
  struct Case {
    std::vector<std::string> args;
    std::string field;
  };
  const std::string garbled = file("garbled.log",
                                   " [2024-04-11 10:00:00] iteration       10/     100 | consumed samples:         1280 | "
                                   "elapsed time per iteration (ms): 54x0.7 | learning rate: 1.0E-04 | global batch size:   128 |\n")
                                  .string();
  const Case cases[] = {
      {{}, "calibrate"},
      {{"--nccl", kFixtures + "bench/all_reduce_gb10_2x1.txt"}, "--gpu"},
      {{"--nccl", kFixtures + "bench/alltoall_h100_1x4_truncated.txt", "--gpu", "h100"}, "nccl:"},
      {{"--log", kFixtures + "logs/torchtitan_interleaved.log", "--gpu", "h100", "--model", "llama3-8b"}, "log:"},
      {{"--log", garbled, "--gpu", "h100", "--model", "llama3-8b", "--plan", "gbs=128"}, "log:"},
      {{"--log", kFixtures + "logs/megatron_mixtral_h100.log", "--gpu", "h100", "--cluster", "h100:16", "--plan",
        "tp=2,gbs=128,seq=4096"},
       "tensor_model_parallel_size"},
      {{"--runs", kFit, "--gpu", "h100x"}, "gpu"},  // a misspelt --gpu, even where the rows name their GPU
      {{"--held-out", kRest, "--group", "publisher"}, "--group"},
      {{"--held-out", kRest, "--draws", "0"}, "--draws"},
  };
  for (const Case& c : cases) {
    const RunResult r = run(c.args);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find(c.field), std::string::npos) << describe(r);
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << describe(r);  // one line
  }
}

// A value the GPU refuses is named where the profile holds it: a measured GEMM faster than the
// H200's 989.4 TFLOP/s peak by its row, an efficiency above 1 under "parameters".
TEST_F(CalibrateCommand, AProfileValueOutOfRangeIsNamedWhereTheFileHoldsIt) {
  const std::string gemm = file("gemm.json", R"({"schema_version": 1, "kind": "tessera-calibration-profile",
      "gpus": [{"key": "h200", "parameters": {"gemm_efficiency": 0.7},
                "measured_gemms": [{"m": 4096, "n": 4096, "k": 4096, "dtype": "bf16", "tflops": 700},
                                   {"m": 8192, "n": 8192, "k": 8192, "dtype": "bf16", "tflops": 5000}]}]})").string();
  const std::string efficiency = file("eff.json", R"({"schema_version": 1, "kind": "tessera-calibration-profile",
      "gpus": [{"key": "h200", "parameters": {"gemm_efficiency": 1.5}}]})").string();
  command_.clear();
  for (const auto& [profile, field] : {std::pair{gemm, std::string("profile.gpus[0].measured_gemms[1].tflops")},
                                       std::pair{efficiency, std::string("profile.gpus[0].parameters.gemm_efficiency")}}) {
    const RunResult r = run({"estimate", "--profile", profile});
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_NE(r.err.find(field + " ("), std::string::npos) << describe(r);
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << describe(r);  // one line
  }
}

TEST_F(CalibrateCommand, AProfileThatNamesAnUnknownGpuIsRefused) {
  const std::string bad = file("bad.json", R"({"schema_version": 1, "kind": "tessera-calibration-profile",
      "gpus": [{"key": "z100", "parameters": {"gemm_efficiency": 0.5}}]})").string();
  command_.clear();
  const RunResult r = run({"estimate", "--profile", bad});
  EXPECT_EQ(r.exit_code, 2) << describe(r);
  EXPECT_NE(r.err.find("profile.gpus[0].key"), std::string::npos) << describe(r);
}

}  // namespace
}  // namespace tessera
