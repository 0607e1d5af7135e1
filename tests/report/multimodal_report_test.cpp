// The multimodal report: the JSON carries the colocated plan and the winner's margin over the
// runner-up (their step times' ratio, less one), the table says the same in words, and the HTML
// page built from that JSON shows the colocated row and the margin tagged with their fields.
#include "report/multimodal_report.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <fmt/core.h>

#include "catalog/data_mixes.h"
#include "catalog/gpu_catalog.h"
#include "catalog/multimodal_models.h"
#include "formats/data_mix_json.h"
#include "formats/multimodal_json.h"
#include "report/multimodal_page.h"

namespace tessera {
namespace {

struct Report {
  MultimodalSpec model = load_multimodal_model("qwen2-vl-7b");
  Cluster cluster = load_cluster("h100-sxm-80gb:16");
  DataMix mix = load_data_mix("caption-like");
  MultimodalSearch search = search_multimodal_plans(model, cluster, mix, 32);
};

const Report& report() {
  static const Report r;
  return r;
}

TEST(MultimodalReport, JsonCarriesColocatedAndTheMarginOverTheRunnerUp) {
  const Report& r = report();
  ASSERT_TRUE(r.search.colocated_found);
  const nlohmann::json j = multimodal_search_to_json(r.search, r.model, r.mix, r.cluster);
  const nlohmann::json& c = j.at("colocated");
  EXPECT_EQ(c.at("strategy"), "colocated");
  EXPECT_EQ(c.at("iteration_time_s").get<double>(), r.search.colocated.iteration_time_s);
  EXPECT_EQ(c.at("boundary_s").get<double>(), r.search.colocated.boundary_s);
  EXPECT_EQ(c.at("module_phases_s").get<double>(), r.search.colocated.module_phases_s);
  for (const auto& m : c.at("modules")) EXPECT_TRUE(m.at("own_layout").is_boolean()) << m.dump();
  EXPECT_FALSE(j.at("baseline_monolithic").contains("own_layout"));
  const std::vector<MultimodalStrategy> ranked = ranked_strategies(r.search);
  ASSERT_GE(ranked.size(), 2u);
  const double winner_s = strategy_plan(r.search, ranked[0]).iteration_time_s;
  const double runner_up_s = strategy_plan(r.search, ranked[1]).iteration_time_s;
  EXPECT_DOUBLE_EQ(j.at("margin_over_runner_up").get<double>(), runner_up_s / winner_s - 1.0);
  EXPECT_GE(j.at("margin_over_runner_up").get<double>(), 0.0);
  EXPECT_EQ(j.at("recommended_plan").at("iteration_time_s").get<double>(), winner_s);
  EXPECT_NE(j.at("runner_up"), j.at("recommended"));

  const std::string table = multimodal_search_to_table(r.search, r.model, r.mix, r.cluster);
  const std::string winner_line =
      fmt::format("winner {} by {:.1f}% over the runner-up, {}", j.at("recommended").get<std::string>(),
                  100.0 * j.at("margin_over_runner_up").get<double>(), j.at("runner_up").get<std::string>());
  EXPECT_NE(table.find(winner_line), std::string::npos) << table;
  EXPECT_NE(table.find("colocated (every GPU, per-module layouts)"), std::string::npos) << table;
}

TEST(MultimodalReport, PageShowsTheColocatedRowAndTheMarginTagged) {
  const Report& r = report();
  const nlohmann::json j = multimodal_search_to_json(r.search, r.model, r.mix, r.cluster);
  const std::string html = report::multimodal_page_html(j, {"t", std::nullopt, std::nullopt});
  for (const char* path :
       {"colocated.iteration_time_s", "colocated.mfu", "colocated.gpus_used", "margin_over_runner_up"})
    EXPECT_NE(html.find(std::string("data-json=\"") + path + "\""), std::string::npos) << path;
  EXPECT_NE(html.find("runner-up"), std::string::npos);
}

}  // namespace
}  // namespace tessera
