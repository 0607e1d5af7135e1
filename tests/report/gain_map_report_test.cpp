// The gain map's table and JSON: one row per model and one column per GPU count, each cell's gain
// and split as in gain_to_json, and a conclusion that names where co-adapting pays, where it is
// negligible (below kWorthwhileGainFraction) and where nothing fits.
#include "report/gain_map_report.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

GainMapCell cell(const std::string& model, std::int64_t gpus, double saved_fraction, bool fits = true) {
  GainMapCell c;
  c.model = model;
  c.parameters = model == "big" ? 7e10 : 8e9;
  c.gpus = gpus;
  c.scenario = gpus >= 512 ? "cbs-pretrain" : "pretrain";
  c.fits = fits;
  c.gain.fixed_s = 1000;
  c.gain.total_s = 1000 * saved_fraction;
  c.gain.from_batch_s = 0.25 * c.gain.total_s;
  c.gain.from_plan_s = 0.75 * c.gain.total_s;
  c.gain.optimum_s = c.gain.total_s + 1;
  return c;
}

std::vector<GainMapCell> sample_map() {
  return {cell("small", 32, 0.001), cell("small", 4096, 0.002), cell("big", 32, 0.0, false), cell("big", 4096, 0.043)};
}

TEST(GainMapReport, ConclusionNamesEachKindOfCell) {
  const std::string text = gain_map_conclusion(sample_map());
  EXPECT_NE(text.find("pays (>= 1% faster than fixed) for big at 4096 GPUs"), std::string::npos) << text;
  EXPECT_NE(text.find("negligible (< 1%) for small at 32, 4096 GPUs"), std::string::npos) << text;
  EXPECT_NE(text.find("no plan fits for big at 32 GPUs"), std::string::npos) << text;
  EXPECT_NE(gain_map_conclusion({cell("small", 32, 0.001)}).find("pays (>= 1% faster than fixed) nowhere"),
            std::string::npos);
}

TEST(GainMapReport, TableHasARowPerModelAndAColumnPerCount) {
  const std::string table = gain_map_to_table(sample_map(), "h100-sxm-80gb");
  EXPECT_NE(table.find("32 GPUs"), std::string::npos);
  EXPECT_NE(table.find("4096 GPUs"), std::string::npos);
  const auto small_row = table.find("\nsmall");
  const auto big_row = table.find("\nbig");
  ASSERT_NE(small_row, std::string::npos);
  ASSERT_NE(big_row, std::string::npos);
  EXPECT_LT(small_row, big_row);  // rows in the order given
  const std::string big = table.substr(big_row + 1, table.find('\n', big_row + 1) - big_row - 1);
  EXPECT_NE(big.find("no fit"), std::string::npos) << big;
  EXPECT_NE(big.find("+4.3% (+1.1/+3.2)"), std::string::npos) << big;  // 4.3 = 1.075 + 3.225
}

TEST(GainMapReport, JsonCellsCarryTheGainOrNull) {
  const nlohmann::json j = gain_map_to_json(sample_map(), "h100-sxm-80gb");
  ASSERT_EQ(j.at("cells").size(), 4u);
  const auto& big = j.at("cells")[3];
  EXPECT_NEAR(big.at("gain").at("total_pct").get<double>(), 4.3, 1e-12);
  EXPECT_NEAR(big.at("gain").at("from_batch_pct").get<double>() + big.at("gain").at("from_plan_pct").get<double>(), 4.3,
              1e-12);
  EXPECT_FALSE(big.at("negligible").get<bool>());
  EXPECT_TRUE(j.at("cells")[0].at("negligible").get<bool>());
  EXPECT_TRUE(j.at("cells")[2].at("gain").is_null());
  EXPECT_FALSE(j.at("cells")[2].at("negligible").get<bool>());  // no fit is not "negligible"
  EXPECT_EQ(j.at("conclusion").get<std::string>(), gain_map_conclusion(sample_map()));
}

}  // namespace
}  // namespace tessera
