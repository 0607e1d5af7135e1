#include <gtest/gtest.h>

#include <cmath>

#include "common/thrown_field.h"
#include "reliability/failure_rates.h"

namespace tessera {
namespace {

using testing::thrown_field;

// The defaults reproduce the Llama 3 report they come from (arXiv 2407.21783, section 3.3.4):
// 419 unexpected interruptions in 54 days on 16,384 GPUs / 2,048 nodes is one every
// 1,296 / 419 = 3.09 h ("about one every 3 hours"), and 47 planned ones.
TEST(FailureRates, DefaultsReproduceTheLlama3Snapshot) {
  const FailureRates r = default_failure_rates();
  const double hours = 54.0 * 24.0;
  EXPECT_NEAR(job_failures_per_hour(r, 16384, 8) * hours, 419.0, 1e-9);
  EXPECT_NEAR(job_planned_per_hour(r, 16384, 8) * hours, 47.0, 1e-9);
  EXPECT_NEAR(job_mtbf_s(r, 16384, 8) / 3600.0, hours / 419.0, 1e-9);
  // 58.7% of the unexpected ones on GPUs (Table 5), all of them node losses.
  EXPECT_NEAR(job_node_losses_per_hour(r, 16384) / job_failures_per_hour(r, 16384, 8), 0.587, 1e-12);
  // Per-component MTBFs in the range fleet reports give (GPU ~86,000 h, node ~15,000 h).
  EXPECT_NEAR(1.0 / r.per_gpu_hour, 86'300, 500);
  EXPECT_NEAR(1.0 / r.per_node_hour, 15'300, 200);
}

// Failures add up over a job's parts: twice the GPUs in twice the nodes halve the MTBF; a
// partial node counts as one node.
TEST(FailureRates, JobRateIsLinearInGpusAndNodes) {
  const FailureRates r = default_failure_rates();
  EXPECT_NEAR(job_mtbf_s(r, 2048, 8) / job_mtbf_s(r, 4096, 8), 2.0, 1e-12);
  EXPECT_EQ(job_nodes(4, 8), 1);
  EXPECT_EQ(job_nodes(17, 8), 3);
  EXPECT_NEAR(job_failures_per_hour(r, 4, 8), 4 * r.per_gpu_hour + r.per_node_hour, 1e-18);
}

TEST(FailureRates, BadRatesNameTheField) {
  FailureRates r = default_failure_rates();
  r.per_gpu_hour = -1;
  EXPECT_EQ(thrown_field([&] { r.validate(); }), "failures.per_gpu_hour");
  r.per_gpu_hour = 0;
  r.per_node_hour = 0;
  EXPECT_EQ(thrown_field([&] { r.validate(); }), "failures");
  r.per_node_hour = std::nan("");
  EXPECT_EQ(thrown_field([&] { r.validate(); }), "failures.per_node_hour");
  FleetReport bad = llama3_fleet_report();
  bad.gpu_share = 1.5;
  EXPECT_EQ(thrown_field([&] { rates_from_fleet_report(bad); }), "report.gpu_share");
}

}  // namespace
}  // namespace tessera
