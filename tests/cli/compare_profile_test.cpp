// `tessera plan --compare-profile OLD.json`, end to end: the documented case (README "Links that
// change": llama3-8b on 64 A100 + 64 H100, the inter-pool link quartered from 3,200 to 800 Gbit/s)
// changes the recommendation from whole replicas per pool to a pipeline across the pools, and the
// reported cost is the old plan re-costed under the current links minus the new best, recomputed
// here from the printed plans with estimate() and the ring all-reduce closed form; the homogeneous path with a link flag; identical conditions report no
// change and zero cost; bad flags and combinations exit 2 naming the flag.
#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "calibrate/calibration_profile.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "cli_process.h"
#include "cost/cost_model.h"
#include "formats/calibration_profile_json.h"
#include "formats/plan_text.h"
#include "model/parameter_count.h"

namespace {

using namespace tessera;
using namespace tessera::testing;

const std::string kProfiles = std::string(TESSERA_SOURCE_DIR) + "/examples/profiles/";
const std::string kOld = kProfiles + "inter-pool-3200g.json", kNew = kProfiles + "inter-pool-800g.json";
const std::string kMixed = "a100-sxm-80gb:64+h100-sxm-80gb:64";
const std::vector<std::string> kMixedRequest = {"plan",  "--model", "llama3-8b", "--cluster", kMixed,
                                                "--gbs", "512",     "--seq",      "4096",      "--quiet"};
const std::vector<std::string> kSinglePoolRequest = {"plan",  "--model", "llama3-8b", "--cluster", "h100-sxm-80gb:64",
                                                     "--gbs", "256",     "--seq",     "8192",      "--quiet"};
constexpr const char* kEmptyProfile = R"({"schema_version": 1, "kind": "tessera-calibration-profile", "gpus": []})";

std::vector<std::string> compare_args(std::vector<std::string> args, const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

// Seconds to ring-all-reduce fp32 gradients across k pools (Patarasuk and Yuan: 2 (k-1)/k of the
// bytes over the link plus 2 (k-1) latencies), written out here rather than taken from the planner.
double ring_all_reduce_s(double bytes, double k, const LinkTier& link) {
  return 2.0 * (k - 1) / k * bytes / link.bandwidth_bytes_per_s + 2.0 * (k - 1) * link.latency_s;
}

void expect_cost_consistent(const nlohmann::json& j, double old_plan_now_s) {
  const double new_best_s = j.at("new_best").at("iteration_time_s").get<double>();
  const auto& cost = j.at("cost_of_keeping_old_plan");
  EXPECT_NEAR(j.at("old_plan_now").at("iteration_time_s").get<double>(), old_plan_now_s, 1e-9 * old_plan_now_s);
  EXPECT_NEAR(cost.at("per_step_s").get<double>(), old_plan_now_s - new_best_s, 1e-9 * old_plan_now_s);
  EXPECT_NEAR(cost.at("percent").get<double>(), 100.0 * (old_plan_now_s - new_best_s) / new_best_s, 1e-7);
  EXPECT_NEAR(cost.at("per_1000_steps_s").get<double>(), 1000.0 * (old_plan_now_s - new_best_s), 1e-6 * old_plan_now_s);
}

class CompareProfileCli : public CliScratchTest {};

TEST_F(CompareProfileCli, AHalvedInterPoolLinkChangesTheDocumentedPlanAndCostsTheOldOne) {
  const auto j = run_json(compare_args(kMixedRequest, {"--profile", kNew, "--compare-profile", kOld}));
  ASSERT_TRUE(j.contains("recommendation_changed")) << j.dump();
  EXPECT_EQ(j.at("cluster_kind"), "mixed");
  EXPECT_TRUE(j.at("recommendation_changed").get<bool>());
  EXPECT_EQ(j.at("old_conditions").at("links").at("inter_pool_gbps").get<double>(), 3200.0);
  EXPECT_EQ(j.at("current_conditions").at("links").at("inter_pool_gbps").get<double>(), 800.0);
  // At 3,200 Gbit/s both pools hold replicas; at 800 their gradient all-reduce costs more than a
  // pipeline across the pools, whose boundary carries only activations.
  const auto& old_best = j.at("old_best");
  ASSERT_EQ(old_best.at("strategy"), "whole-replicas") << old_best.dump();
  ASSERT_EQ(old_best.at("pools").size(), 2u);
  EXPECT_EQ(j.at("new_best").at("strategy"), "cross-pool");
  EXPECT_TRUE(j.at("new_best").at("left_out").empty());

  // The old plan under the current links, from its printed pool plans.
  const ModelSpec model = load_model("llama3-8b");
  LinkOverrides now;
  now.inter_pool_gbps = 800;
  now.inter_pool_latency_us = 10;
  const MixedCluster cluster = load_mixed_cluster(kMixed, now);
  double slowest = 0;
  for (const auto& p : old_best.at("pools")) {
    const Cluster& pool = cluster.pools.at(p.at("pool").get<std::size_t>());
    const PlanRequest r = load_plan(p.at("plan").get<std::string>(), model, pool);
    slowest = std::max(slowest, estimate(model, pool, r.plan, r.workload).iteration_time_s);
  }
  const double grad_bytes = 4.0 * static_cast<double>(count_parameters(model).total());
  const double old_plan_now_s = slowest + ring_all_reduce_s(grad_bytes, 2, cluster.inter_pool);
  expect_cost_consistent(j, old_plan_now_s);
  EXPECT_GT(j.at("cost_of_keeping_old_plan").at("per_step_s").get<double>(), 0.0);

  // Each side's best is what a plain plan prints under that side's profile.
  const auto plain_old = run_json(compare_args(kMixedRequest, {"--profile", kOld}));
  const auto plain_new = run_json(compare_args(kMixedRequest, {"--profile", kNew}));
  EXPECT_DOUBLE_EQ(old_best.at("iteration_time_s").get<double>(), plain_old.at("iteration_time_s").get<double>());
  EXPECT_DOUBLE_EQ(j.at("new_best").at("iteration_time_s").get<double>(),
                   plain_new.at("iteration_time_s").get<double>());
}

TEST_F(CompareProfileCli, TheTextSaysWhatChangedAndWhatKeepingTheOldPlanCosts) {
  const RunResult r = run(compare_args(kMixedRequest, {"--profile", kNew, "--compare-profile", kOld}));
  ASSERT_EQ(r.exit_code, 0) << describe(r);
  EXPECT_NE(r.out.find("the recommendation changed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("keeping the old plan:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(changed)"), std::string::npos) << r.out;  // the inter-pool row
  EXPECT_NE(r.out.find("calibration profile " + kNew), std::string::npos) << r.out;
}

TEST_F(CompareProfileCli, ALinkFlagReplansOnePoolAndTheCostIsTheOldPlanReestimated) {
  const std::string empty = file("empty.json", kEmptyProfile).string();
  const auto j = run_json(compare_args(kSinglePoolRequest, {"--inter-node-gbps", "50", "--compare-profile", empty}));
  ASSERT_TRUE(j.contains("recommendation_changed")) << j.dump();
  EXPECT_EQ(j.at("cluster_kind"), "single_pool");
  EXPECT_TRUE(j.at("recommendation_changed").get<bool>());
  EXPECT_EQ(j.at("current_conditions").at("link_flags"), nlohmann::json({{"inter_node_gbps", 50.0}}));
  EXPECT_TRUE(j.at("current_conditions").at("profile").is_null());
  NodeLinkOverrides slow;
  slow.inter_node_gbps = 50;
  const Cluster now = with_node_links(load_cluster("h100-sxm-80gb:64"), slow);
  const ModelSpec model = load_model("llama3-8b");
  const PlanRequest old_plan = load_plan(j.at("old_best").at("shorthand").get<std::string>(), model, now);
  expect_cost_consistent(j, estimate(model, now, old_plan.plan, old_plan.workload).iteration_time_s);
  EXPECT_TRUE(j.at("old_plan_now").at("fits").get<bool>());
  const auto plain = run_json(compare_args(kSinglePoolRequest, {"--inter-node-gbps", "50"}));
  EXPECT_DOUBLE_EQ(j.at("new_best").at("iteration_time_s").get<double>(),
                   plain.at("plans").at(0).at("iteration_time_s").get<double>());
}

TEST_F(CompareProfileCli, IdenticalConditionsReportNoChangeAndZeroCost) {
  const std::string empty = file("empty.json", kEmptyProfile).string();
  for (const auto& args : {compare_args(kMixedRequest, {"--profile", kOld, "--compare-profile", kOld}),
                           compare_args(kSinglePoolRequest, {"--compare-profile", empty})}) {
    const auto j = run_json(args);
    ASSERT_TRUE(j.contains("recommendation_changed")) << j.dump();
    EXPECT_FALSE(j.at("recommendation_changed").get<bool>());
    EXPECT_EQ(j.at("old_best"), j.at("new_best"));
    EXPECT_EQ(j.at("cost_of_keeping_old_plan").at("per_step_s").get<double>(), 0.0);
    EXPECT_EQ(j.at("old_plan_now").at("iteration_time_s"), j.at("new_best").at("iteration_time_s"));
  }
}

TEST_F(CompareProfileCli, BadLinkFlagsExitTwoNamingTheFlag) {
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{{"--intra-node-gbps", "0"},
                                                                                    {"--inter-node-gbps", "-5"},
                                                                                    {"--inter-pool-gbps", "1e9"},
                                                                                    {"--intra-node-latency-us", "0"},
                                                                                    {"--inter-node-latency-us", "5000"},
                                                                                    {"--inter-pool-latency-us", "1e6"},
                                                                                    {"--inter-pool-gbps", "nan"}})
    expect_error_naming(run(compare_args(kSinglePoolRequest, {flag, value})), flag);
  expect_error_naming(run(compare_args(kSinglePoolRequest, {"--compare-profile", (dir_ / "missing.json").string()})),
                      "--compare-profile");
}

TEST_F(CompareProfileCli, CombinationsThatMakeNoSenseAreRefused) {
  const std::string empty = file("empty.json", kEmptyProfile).string();
  for (const auto& extra : std::vector<std::vector<std::string>>{
           {"--emit", "megatron"}, {"--html", (dir_ / "r.html").string()}, {"--failures"}, {"--top", "3"}}) {
    const RunResult r = run(compare_args(compare_args(kSinglePoolRequest, {"--compare-profile", empty}), extra));
    expect_error_naming(r, "--compare-profile");
    EXPECT_NE(r.err.find(extra.front()), std::string::npos) << r.err;
  }
  expect_error_naming(run({"plan", "--model", "mllm-72b-gen", "--cluster", "h800:1296", "--compare-profile", empty}),
                      "--compare-profile");
  // A bad links field in the old profile names it.
  const std::string bad = file("bad.json", R"({"schema_version": 1, "kind": "tessera-calibration-profile", "gpus": [],
                           "links": {"inter_pool_latency_us": 0}})")
                              .string();
  expect_error_naming(run(compare_args(kMixedRequest, {"--compare-profile", bad})), "profile.links.inter_pool_latency_us");
}

}  // namespace
