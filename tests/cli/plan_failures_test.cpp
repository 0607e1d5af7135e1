// `tessera plan --failures`, end to end: every plan carries its failure figures, the list is in
// expected-goodput order with the recommended --save-interval in its Megatron arguments, the
// documented case where failures change the winner, and bad values (one line naming the flag,
// exit 2).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_process.h"

namespace {

using namespace tessera::testing;

class PlanFailuresCli : public CliScratchTest {};

std::string flag_value(const nlohmann::json& args, const std::string& flag) {
  for (std::size_t i = 0; i + 1 < args.size(); ++i)
    if (args[i] == flag) return args[i + 1].get<std::string>();
  return "";
}

// Each plan: the four fields the issue names (and their consistency: goodput = throughput x
// fraction, the interval in steps x the step time), goodput order, --save-interval = the interval.
TEST_F(PlanFailuresCli, JsonCarriesTheFailureFiguresOfEveryPlan) {
  const auto j = run_json({"plan", "--model", "llama3-70b", "--cluster", "h100-sxm-80gb:256", "--gbs", "512", "--seq",
                           "8192", "--failures", "--quiet", "--top", "4"});
  ASSERT_TRUE(j.contains("failures")) << j.dump();
  EXPECT_TRUE(j.at("failures").at("exact").get<bool>());
  ASSERT_FALSE(j.at("plans").empty());
  double previous = 1e300;
  for (const auto& p : j.at("plans")) {
    const auto& f = p.at("failures");
    for (const char* key : {"checkpoint_interval_steps", "checkpoint_write_s", "restart_s", "expected_goodput_fraction"})
      EXPECT_TRUE(f.contains(key)) << key;
    const double fraction = f.at("expected_goodput_fraction").get<double>();
    EXPECT_GT(fraction, 0.5);
    EXPECT_LT(fraction, 1.0);
    const auto steps = f.at("checkpoint_interval_steps").get<std::int64_t>();
    EXPECT_GE(steps, 1);
    EXPECT_NEAR(f.at("checkpoint_interval_s").get<double>(), steps * p.at("iteration_time_s").get<double>(), 1e-6);
    const double goodput = p.at("expected_goodput_tokens_per_s").get<double>();
    EXPECT_NEAR(goodput, p.at("tokens_per_s").get<double>() * fraction, 1e-6 * goodput);
    EXPECT_LE(goodput, previous);
    previous = goodput;
    EXPECT_EQ(flag_value(p.at("megatron_args"), "--save-interval"), std::to_string(steps));
  }
}

// The documented case (README "plan --failures"): 16,384 H100 for Llama 3.1 405B, checkpoints
// written by the first data-parallel replica only (--no-ckpt-fully-parallel-save), 1 GB/s per
// node (a shared filesystem's share), a node MTBF of 3,000 h (about twice Llama 3's rate). The
// fastest plan (pp=8) puts its 64 weight writers on 8 nodes; tp=8,pp=16 spreads 128 over 16
// nodes, halving the checkpoint stall, and wins on expected goodput although its step is slower.
TEST_F(PlanFailuresCli, ShardedCheckpointWritesChangeTheWinnerAt16kGpus) {
  const std::vector<std::string> base = {"plan", "--model", "llama3.1-405b", "--cluster", "h100-sxm-80gb:16384",
                                         "--gbs", "2048", "--seq", "8192", "--quiet", "--top", "3"};
  std::vector<std::string> failing = base;
  failing.insert(failing.end(), {"--failures", "--no-fully-parallel-save", "--node-write-gbps", "1", "--mtbf-node-h", "3000"});
  const auto plain = run_json(base);
  const auto j = run_json(failing);
  ASSERT_FALSE(plain.at("plans").empty());
  ASSERT_GE(j.at("plans").size(), 2u);
  const auto& winner = j.at("plans").at(0);
  EXPECT_GT(winner.at("step_time_rank").get<int>(), 1) << j.at("why");
  EXPECT_NE(winner.at("plan"), plain.at("plans").at(0).at("plan"));
  // The step-time winner is in the list, with fewer writers, a longer stall and less goodput.
  const nlohmann::json* fastest = nullptr;
  for (const auto& p : j.at("plans"))
    if (p.at("step_time_rank").get<int>() == 1) fastest = &p;
  ASSERT_NE(fastest, nullptr);
  EXPECT_EQ(fastest->at("plan"), plain.at("plans").at(0).at("plan"));
  EXPECT_LT(winner.at("tokens_per_s").get<double>(), fastest->at("tokens_per_s").get<double>());
  EXPECT_GT(winner.at("failures").at("checkpoint_writers").get<int>(), fastest->at("failures").at("checkpoint_writers").get<int>());
  EXPECT_LT(winner.at("failures").at("checkpoint_blocking_s").get<double>(),
            fastest->at("failures").at("checkpoint_blocking_s").get<double>());
  EXPECT_GT(winner.at("expected_goodput_tokens_per_s").get<double>(),
            fastest->at("expected_goodput_tokens_per_s").get<double>());
  EXPECT_NE(j.at("why").get<std::string>().find("ranks above the fastest plan"), std::string::npos) << j.at("why");
  const auto& args = winner.at("megatron_args");
  EXPECT_NE(std::find(args.begin(), args.end(), "--no-ckpt-fully-parallel-save"), args.end());
}

// The table prints the interval; --emit megatron puts it in the script with the save flags.
TEST_F(PlanFailuresCli, TableAndScriptCarryTheInterval) {
  const std::vector<std::string> base = {"plan", "--model", "llama3-8b", "--cluster", "h100-sxm-80gb:64", "--gbs",
                                         "256", "--seq", "8192", "--quiet", "--failures", "--async-ckpt"};
  const RunResult table = run(base);
  ASSERT_EQ(table.exit_code, 0) << describe(table);
  EXPECT_NE(table.out.find("recommended checkpoint interval: every "), std::string::npos) << table.out;
  std::vector<std::string> emit = base;
  emit.insert(emit.end(), {"--emit", "megatron"});
  const RunResult script = run(emit);
  ASSERT_EQ(script.exit_code, 0) << describe(script);
  EXPECT_NE(script.out.find("SAVE_INTERVAL=${SAVE_INTERVAL:-"), std::string::npos) << script.out;
  EXPECT_EQ(script.out.find("SAVE_INTERVAL=${SAVE_INTERVAL:-1000}"), std::string::npos) << script.out;
  EXPECT_NE(script.out.find("--async-save"), std::string::npos);
  EXPECT_NE(script.out.find("--use-persistent-ckpt-worker"), std::string::npos);
}

TEST_F(PlanFailuresCli, BadValuesNameTheFlag) {
  const std::vector<std::string> base = {"plan", "--model", "llama3-8b", "--cluster", "h100-sxm-80gb:64", "--gbs", "256",
                                         "--quiet"};
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--mtbf-node-h", "0"},     {"--mtbf-node-h", "-5"},   {"--mtbf-node-h", "nan"},  {"--mtbf-node-h", "1e300"},
      {"--ckpt-gbps", "0"},       {"--ckpt-gbps", "inf"},    {"--restart-s", "-1"},     {"--restart-s", "nan"},
      {"--node-write-gbps", "0"}, {"--replacement-wait-s", "-3"}, {"--spare-nodes", "-1"}, {"--spare-nodes", "8"}};
  for (const auto& [flag, value] : cases) {
    std::vector<std::string> args = base;
    args.insert(args.end(), {flag, value});
    SCOPED_TRACE(flag + " " + value);
    expect_error_naming(run(args), flag);
  }
}

}  // namespace
