// End-to-end checks of `tessera adapt simulate` (the real binary, under `timeout 60`): the three
// configurations of issue 7 run as they are, --json has the documented fields and a parseable
// Megatron-LM schedule per policy, scenario files are read, and bad input exits 2 with one stderr
// line naming the field.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "adapt/batch_grid.h"
#include "adapt/batch_schedule.h"
#include "adapt/training_run_simulator.h"
#include "cli_process.h"

namespace {

using namespace tessera::testing;

namespace fs = std::filesystem;
using Json = nlohmann::json;

class AdaptCli : public CliScratchTest {
 protected:
  AdaptCli() { command_ = {"adapt", "simulate"}; }

  // Exit 2, one line on stderr naming `field`, nothing on stdout.
  void expect_usage_error(const std::vector<std::string>& args, const std::string& field,
                          const std::vector<std::string>& full = {}) {
    const RunResult r = full.empty() ? run(args) : run_tessera(dir_, full);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_EQ(r.signal, 0) << describe(r);
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << describe(r);
    EXPECT_NE(r.err.find(field), std::string::npos) << describe(r);
    EXPECT_TRUE(r.out.empty()) << describe(r);
  }

};

void expect_policy_fields(const Json& p) {
  for (const char* key : {"time_to_target_s", "schedule", "consumed_tokens", "steps", "batch_changes", "plan_changes",
                          "reconfiguration_s", "segments", "vs_offline_optimum_pct"})
    EXPECT_TRUE(p.contains(key)) << key;
  EXPECT_GT(p.at("time_to_target_s").get<double>(), 0.0);
  const auto schedule = tessera::parse_megatron_batch_schedule(p.at("schedule").get<std::string>());
  EXPECT_EQ(schedule.front().threshold, 0.0);
  EXPECT_EQ(schedule.front().global_batch, p.at("segments")[0].at("global_batch").get<std::int64_t>());
}

// The issue's three commands, default scenario: documented fields, schedules that parse, and the
// simulator's ordering (coadaptive within 1% of fixed and 3% of the optimum, which bounds all).
TEST_F(AdaptCli, TheIssuesThreeConfigurationsRun) {
  for (const auto& [model, cluster] : {std::pair{"llama3-8b", "h100-sxm-80gb:32"},
                                       std::pair{"qwen2.5-32b", "h100-sxm-80gb:32"}, std::pair{"qwen2.5-32b", "mi210:32"}}) {
    const Json j = run_json({"--model", model, "--cluster", cluster});
    EXPECT_EQ(j.at("schema_version"), 1);
    EXPECT_EQ(j.at("model"), model);
    EXPECT_EQ(j.at("scenario").at("name"), "pretrain");
    const Json& policies = j.at("policies");
    for (const char* name : {"fixed", "batch-only", "plan-only", "coadaptive"}) {
      ASSERT_TRUE(policies.contains(name)) << name;
      expect_policy_fields(policies.at(name));
    }
    expect_policy_fields(j.at("offline_optimum"));
    const double optimum = j.at("offline_optimum").at("time_to_target_s");
    const double coadaptive = policies.at("coadaptive").at("time_to_target_s");
    EXPECT_LE(coadaptive, 1.01 * policies.at("fixed").at("time_to_target_s").get<double>()) << model << " " << cluster;
    EXPECT_LE(coadaptive, 1.03 * optimum);
    for (const auto& [name, p] : policies.items()) EXPECT_LE(optimum, 1.001 * p.at("time_to_target_s").get<double>());
  }
}

// A scenario file: a constant noise scale far above every batch, so big batches cost nothing
// statistically and every policy ends at the fastest configuration the grid allows.
TEST_F(AdaptCli, ReadsAScenarioFile) {
  const fs::path path = file("flat.json", R"({"name": "flat", "seq_len": 4096, "token_budget": 2e9,
      "min_batch": 32, "max_batch": 256,
      "noise_scale": [{"tokens": 0, "noise_scale_tokens": 1e12}]})");
  const Json j = run_json({"--model", "llama3-8b", "--cluster", "h100-sxm-80gb:32", "--scenario", path.string()});
  EXPECT_EQ(j.at("scenario").at("name"), "flat");
  EXPECT_EQ(j.at("candidates").at("batches").front(), 32);
  EXPECT_EQ(j.at("candidates").at("batches").back(), 256);
}

TEST_F(AdaptCli, BadInputExitsTwoWithOneLineNamingTheField) {
  const std::vector<std::string> base = {"--model", "llama3-8b", "--cluster", "h100-sxm-80gb:32"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> all = base;
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  };
  expect_usage_error(with({"--scenario", "nope"}), "--scenario");
  expect_usage_error(with({"--scenario", file("bad.json", "{").string()}), "--scenario");
  expect_usage_error(with({"--scenario", file("neg.json", R"({"seq_len": 4096, "token_budget": -1,
      "noise_scale": [{"tokens": 0, "noise_scale_tokens": 1e6}]})")
                                                .string()}),
                     "scenario.token_budget");
  expect_usage_error(with({"--scenario", file("unknown.json", R"({"seq_len": 4096, "token_budget": 1e9,
      "noise_scale": [{"tokens": 0, "noise_scale_tokens": 1e6}], "budget": 3})")
                                                .string()}),
                     "scenario.budget");
  expect_usage_error({"--cluster", "h100-sxm-80gb:32"}, "--model");
  expect_usage_error({"--model", "llama3-8b", "--cluster", "h100-sxm-80gb:32+a100-sxm-80gb:32"}, "--cluster");
  expect_usage_error({"--model", "no-such-model", "--cluster", "h100-sxm-80gb:32"}, "model");
  expect_usage_error({}, "simulate", {"adapt"});
}

// Issue 15: a run described in flags (budget, seq, noise scale ends, batch bounds, GPU count) is
// the scenario simulated; change counts agree with the printed schedule; the conclusion is there.
TEST_F(AdaptCli, ScenarioDescribedInFlags) {
  const Json j = run_json({"--model", "llama3-8b", "--cluster", "h100-sxm-80gb", "--gpus", "16", "--seq", "2048",
                           "--tokens", "2e9", "--noise-start", "1e5", "--noise-end", "2e6", "--min-gbs", "32",
                           "--max-gbs", "512"});
  EXPECT_EQ(j.at("cluster").at("gpus"), 16);
  const Json& s = j.at("scenario");
  EXPECT_EQ(s.at("name"), "described");
  EXPECT_EQ(s.at("seq_len"), 2048);
  EXPECT_EQ(s.at("token_budget"), 2e9);
  EXPECT_EQ(s.at("min_batch"), 32);
  EXPECT_EQ(s.at("max_batch"), 512);
  EXPECT_NEAR(s.at("noise_scale").back().at("noise_scale_tokens").get<double>(), 2e6, 1.0);
  EXPECT_GE(j.at("candidates").at("batches").front().get<std::int64_t>(), 32);
  EXPECT_LE(j.at("candidates").at("batches").back().get<std::int64_t>(), 512);
  EXPECT_FALSE(j.at("conclusion").get<std::string>().empty());
  for (const auto& [name, p] : j.at("policies").items()) {
    const auto schedule = tessera::parse_megatron_batch_schedule(p.at("schedule").get<std::string>());
    EXPECT_EQ(static_cast<std::int64_t>(schedule.size()) - 1, p.at("batch_changes").get<std::int64_t>()) << name;
  }
  // --gpus replaces the count of GPU:COUNT.
  const Json k = run_json({"--model", "llama3-8b", "--cluster", "h100-sxm-80gb:64", "--gpus", "16", "--tokens", "2e9",
                           "--trajectory", "kaplan"});
  EXPECT_EQ(k.at("cluster").at("gpus"), 16);
}

TEST_F(AdaptCli, BadScenarioFlagsExitTwoNamingTheFlag) {
  const std::vector<std::string> base = {"--model", "llama3-8b", "--cluster", "h100-sxm-80gb:16"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> all = base;
    all.insert(all.end(), extra.begin(), extra.end());
    return all;
  };
  expect_usage_error(with({"--gpus", "0"}), "--gpus");
  expect_usage_error(with({"--gpus", "-8"}), "--gpus");
  expect_usage_error(with({"--seq", "0"}), "--seq");
  expect_usage_error(with({"--min-gbs", "0"}), "--min-gbs");
  expect_usage_error(with({"--max-gbs", "100000"}), "--max-gbs");
  expect_usage_error(with({"--min-gbs", "128", "--max-gbs", "64"}), "--max-gbs");
  expect_usage_error(with({"--tokens", "-1"}), "--tokens");
  expect_usage_error(with({"--tokens", "1e30"}), "--tokens");
  expect_usage_error(with({"--tokens", "1e9", "--scenario", "pretrain"}), "--scenario");
  expect_usage_error(with({"--noise-start", "1e5"}), "--noise-end");
  expect_usage_error(with({"--noise-start", "1e5", "--noise-end", "0"}), "--noise-end");
  expect_usage_error(with({"--trajectory", "chinchilla"}), "--trajectory");
  expect_usage_error(with({"--trajectory", "kaplan", "--noise-start", "1e5", "--noise-end", "1e6"}), "--trajectory");
  expect_usage_error({"--model", "llama3-8b", "--cluster", "no-such-gpu", "--gpus", "8"}, "gpu");
}

// `tessera adapt map`: one cell per model x count, the conclusion, and bad lists naming the flag.
TEST_F(AdaptCli, MapReportsEachCellAndSaysWhereTheGainIsNegligible) {
  const RunResult r = run_tessera(dir_, {"adapt", "map", "--models", "llama3-8b", "--gpus", "8,16", "--scenario",
                                         "plateau", "--json"});
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const Json j = Json::parse(r.out);
  ASSERT_EQ(j.at("cells").size(), 2u);
  EXPECT_EQ(j.at("cells")[1].at("gpus"), 16);
  for (const Json& c : j.at("cells")) {
    EXPECT_TRUE(c.at("fits").get<bool>());
    EXPECT_TRUE(c.at("negligible").get<bool>());  // constant noise scale: nothing to adapt to
  }
  EXPECT_NE(j.at("conclusion").get<std::string>().find("negligible"), std::string::npos);
  const RunResult table = run_tessera(dir_, {"adapt", "map", "--models", "llama3-8b", "--gpus", "8", "--scenario",
                                             "plateau"});
  ASSERT_EQ(table.exit_code, 0) << describe(table);
  EXPECT_NE(table.out.find("8 GPUs"), std::string::npos);
  EXPECT_NE(table.out.find("conclusion"), std::string::npos);
  expect_usage_error({}, "--gpus", {"adapt", "map", "--models", "llama3-8b", "--gpus", "0"});
  expect_usage_error({}, "--gpus", {"adapt", "map", "--models", "llama3-8b", "--gpus", "8,x"});
  expect_usage_error({}, "model", {"adapt", "map", "--models", "no-such-model", "--gpus", "8"});
  expect_usage_error({}, "gpu", {"adapt", "map", "--gpu", "no-such-gpu", "--gpus", "8"});
}

// Issue 13's reproducers. max_batch 10,000,000 (the planner searched 40 grid batches for 22 s, or
// ran out of memory) is refused up front naming the field and its limit; token_budget 1e15 (past
// 20 s, linear in the budget) answers with a bounded number of decision windows per policy.
TEST_F(AdaptCli, HugeBatchIsRefusedAndHugeBudgetIsBounded) {
  const std::vector<std::string> base = {"--model", "llama3-8b", "--cluster", "h100-sxm-80gb:32", "--scenario"};
  auto with_file = [&](const char* name, const std::string& fields) {
    std::vector<std::string> all = base;
    const std::string seq_len = fields.find("seq_len") == std::string::npos ? R"("seq_len": 4096, )" : "";
    all.push_back(file(name, R"({"noise_scale": [{"tokens": 0, "noise_scale_tokens": 3e4},
        {"tokens": 1e11, "noise_scale_tokens": 6e6}], )" + seq_len + fields + "}").string());
    return all;
  };
  expect_usage_error(with_file("batch.json", R"("token_budget": 1.6e11, "max_batch": 10000000)"), "scenario.max_batch");
  const RunResult refused = run(with_file("batch2.json", R"("token_budget": 1.6e11, "max_batch": 10000000)"));
  EXPECT_NE(refused.err.find(std::to_string(tessera::kMaxGridBatch)), std::string::npos) << refused.err;
  // Other out-of-range fields: each refused, naming itself.
  expect_usage_error(with_file("seq.json", R"("token_budget": 1e9, "seq_len": 1048576)"), "scenario.seq_len");
  expect_usage_error(with_file("bool.json", R"("token_budget": 1e9, "max_batch": true)"), "scenario.max_batch");
  expect_usage_error(with_file("seed.json", R"("token_budget": 1e9, "seed": 18446744073709551615)"), "scenario.seed");
  expect_usage_error(with_file("budget.json", R"("token_budget": 1e17)"), "scenario.token_budget");
  expect_usage_error(with_file("scale.json", R"("token_budget": 1e9, "network_bandwidth_scale": 1e-30)"),
                     "scenario.network_bandwidth_scale");
  // The budget reproducer, on a 3-point grid: bounded windows, every policy reaches the target.
  std::vector<std::string> args = with_file("budget15.json", R"("token_budget": 1e15, "max_batch": 64)");
  args.push_back("--json");
  const RunResult r = run(args);
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  const Json j = Json::parse(r.out);
  const std::int64_t configurations = j.at("candidates").at("configurations");
  for (const auto& [name, p] : j.at("policies").items()) {
    // Fixed has one candidate, coadaptive all; the others some (at most the one-candidate bound).
    const std::size_t allowed = name == "coadaptive" ? static_cast<std::size_t>(configurations) : 1;
    EXPECT_LE(p.at("windows").get<std::int64_t>(), tessera::max_decision_windows(allowed) * 11 / 10) << name;
    EXPECT_GT(p.at("long_windows").get<std::int64_t>(), 0) << name;
    EXPECT_GE(p.at("time_to_target_s").get<double>(), j.at("offline_optimum").at("time_to_target_s").get<double>() / 1.001);
  }
}

}  // namespace
