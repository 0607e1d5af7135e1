// The balance report: every documented JSON field, with the values it was given.
#include "report/balance_report.h"

#include <gtest/gtest.h>

namespace tessera {
namespace {

TEST(BalanceReport, JsonCarriesEveryDocumentedField) {
  BalanceReport r;
  r.method = "wlb";
  r.balanced = {1.02, 1.01};
  r.random = {1.5, 1.01};
  r.modules.push_back({"encoder", {1.03, 1.0}, {1.09, 1.0}});
  r.n_in = 10;
  r.n_assigned = 8;
  r.n_carried = 2;
  r.time_ms = 0.5;
  const auto j = balance_report_to_json(r);
  for (const char* key : {"schema_version", "source", "method", "dp", "microbatches", "max_tokens", "steps", "seed",
                          "model", "gpu", "imbalance", "lower_bound", "random_imbalance", "n_in", "n_assigned",
                          "n_carried", "mean_delay_steps", "max_delay_steps", "outlier_queues", "step_time_s",
                          "time_ms", "modules"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_DOUBLE_EQ(j["imbalance"].get<double>(), 1.02);
  EXPECT_DOUBLE_EQ(j["random_imbalance"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(j["modules"]["encoder"]["random_imbalance"].get<double>(), 1.09);
  EXPECT_EQ(j["n_assigned"].get<int>() + j["n_carried"].get<int>(), j["n_in"].get<int>());
  const std::string table = balance_report_to_table(r);
  EXPECT_NE(table.find("1.020"), std::string::npos);
  EXPECT_NE(table.find("encoder"), std::string::npos);
}

}  // namespace
}  // namespace tessera
