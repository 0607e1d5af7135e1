// The plan-search report: the memory limit in force, each plan's confidence (text and JSON), and
// the --fix keys added for issue 12.
#include "report/plan_report.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "common/thrown_field.h"

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/units.h"
#include "formats/plan_constraints_text.h"
#include "formats/plan_text.h"

namespace tessera {
namespace {

using testing::thrown_field;

PlanSearch search(const ModelSpec& m, const Cluster& c, const Workload& w, const PlanConstraints& fix = {}) {
  PlannerOptions o;
  o.top_k = 3;
  o.threads = 2;
  return search_plans(m, c, w, fix, o);
}

TEST(PlanReport, JsonShowsTheLimitAndEachPlansConfidence) {
  const ModelSpec m = builtin_model("llama3-70b");
  const Cluster c = load_cluster("h100-sxm-80gb:64");
  const Workload w{512, 8192};
  const PlanSearch s = search(m, c, w);
  const nlohmann::json j = plan_search_to_json(s, m, c, w);
  EXPECT_NEAR(j.at("memory_limit_gib").get<double>(), c.gpu.usable_memory_gib * (1 - kDefaultMemoryHeadroomFraction), 1e-9);
  EXPECT_NEAR(j.at("headroom_gib").get<double>(), c.gpu.usable_memory_gib * kDefaultMemoryHeadroomFraction, 1e-9);
  ASSERT_FALSE(j.at("plans").empty());
  for (const auto& p : j.at("plans")) {
    const auto& conf = p.at("confidence");
    EXPECT_EQ(conf.at("class").get<std::string>(), p.at("plan").at("precision") == "fp8" ? "dense-fp8" : "dense-h100");
    EXPECT_GT(conf.at("runs").get<std::int64_t>(), 0);
    EXPECT_TRUE(p.contains("cross_node_groups"));
  }
}

TEST(PlanReport, TableShowsTheHeadroomAndConfidence) {
  const ModelSpec m = builtin_model("mixtral-8x7b");
  const Cluster c = load_cluster("b200:16");
  const Workload w{128, 4096};
  const PlanSearch s = search(m, c, w);
  const std::string table = plan_search_to_table(s, m, c, w, c.gpu.usable_memory_gib);
  EXPECT_NE(table.find("usable less 5% headroom"), std::string::npos) << table;
  EXPECT_NE(table.find("extrapolates: b200 efficiencies assumed"), std::string::npos) << table;
  PlanConstraints fix;
  fix.max_memory_gib = 150.0;
  const std::string pinned = plan_search_to_table(search(m, c, w, fix), m, c, w, 150.0);
  EXPECT_NE(pinned.find("150.0 GiB (--max-memory-gib)"), std::string::npos) << pinned;
}

// plan --failures: the JSON adds the failure figures to each re-ranked plan (in goodput order) and
// the inputs at the top; the Megatron arguments carry the plan's --save-interval; the table prints
// the recommended interval with Young's and Daly's.
TEST(PlanReport, GoodputRankingJsonAndTable) {
  const ModelSpec m = builtin_model("llama3-70b");
  const Cluster c = load_cluster("h100-sxm-80gb:64");
  const Workload w{512, 8192};
  PlannerOptions o;
  o.top_k = 10;
  o.threads = 2;
  const PlanSearch s = search_plans(m, c, w, PlanConstraints{}, o);
  const FailureModel f;
  const GoodputRanking r = rank_by_goodput(s, m, c, f, 3, false);
  const nlohmann::json j = goodput_ranking_to_json(r, s, m, c, w, f);
  ASSERT_EQ(j.at("plans").size(), r.plans.size());
  EXPECT_EQ(j.at("failures").at("ranking"), "expected_goodput");
  EXPECT_DOUBLE_EQ(j.at("failures").at("inputs").at("storage_write_gbps").get<double>(), f.storage.write_gbps);
  for (std::size_t i = 0; i < r.plans.size(); ++i) {
    const auto& p = j.at("plans")[i];
    EXPECT_EQ(p.at("plan"), plan_to_json(r.plans[i].ranked.plan, w));
    EXPECT_DOUBLE_EQ(p.at("failures").at("expected_goodput_fraction").get<double>(), r.plans[i].failures.useful_fraction);
    const auto& args = p.at("megatron_args");
    const auto it = std::find(args.begin(), args.end(), "--save-interval");
    ASSERT_NE(it, args.end());
    EXPECT_EQ(*(it + 1), std::to_string(r.plans[i].failures.interval_steps));
  }
  EXPECT_EQ(j.at("why"), why_goodput_winner(r));
  const std::string table = goodput_ranking_to_table(r, s, m, c, w, f, 75.0);
  EXPECT_NE(table.find("recommended checkpoint interval: every " + std::to_string(r.plans[0].failures.interval_steps) +
                       " steps"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("--save-interval " + std::to_string(r.plans[0].failures.interval_steps)), std::string::npos);
}

// Issue 13, D11: --fix follows the one rule for every input, a key given twice is an error.
TEST(PlanReport, FixKeyGivenTwiceIsAnError) {
  EXPECT_EQ(thrown_field([] { (void)parse_constraints("tp=8,tp=4"); }), "fix.tp");
  EXPECT_EQ(thrown_field([] { (void)parse_constraints("sp=1,pp=2,sp=1"); }), "fix.sp");
  EXPECT_EQ(*parse_constraints("tp=8,pp=4").tp, 8);
}

TEST(PlanReport, FixOverlapTpPinsTheSearch) {
  EXPECT_FALSE(parse_constraints("").overlap_tp_comm.has_value());
  EXPECT_TRUE(*parse_constraints("overlap_tp=1").overlap_tp_comm);
  EXPECT_FALSE(*parse_constraints("overlap_tp=0").overlap_tp_comm);
}

}  // namespace
}  // namespace tessera
