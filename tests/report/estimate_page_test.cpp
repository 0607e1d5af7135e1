// The estimate page from a hand-made estimate document: its charts are there, each stage gets a
// memory bar, every tagged number is the document's, and a document without a field the page
// shows is an Error naming "report", not a page with a hole.
#include "report/estimate_page.h"

#include <gtest/gtest.h>

#include "common/markup_check.h"
#include "common/thrown_field.h"

namespace tessera::report {
namespace {

nlohmann::json estimate_doc(std::size_t stages) {
  nlohmann::json doc = {{"model", "m"},
                        {"cluster", {{"gpu", "h100-sxm-80gb"}, {"gpus", 16}}},
                        {"iteration_time_s", 1.25},
                        {"tokens_per_s", 52428.8},
                        {"mfu", 0.5},
                        {"hfu", 0.43},
                        {"model_tflops_per_gpu", 405.5},
                        {"peak_memory_gib", 61.5},
                        {"usable_memory_gib", 79.1},
                        {"fits", true},
                        {"breakdown",
                         {{"compute_s", 1.0},
                          {"recompute_s", 0.0},
                          {"tp_comm_s", 0.1},
                          {"cp_comm_s", 0.0},
                          {"ep_comm_s", 0.0},
                          {"pp_comm_s", 0.01},
                          {"bubble_s", 0.1},
                          {"dp_comm_s", 0.03},
                          {"optimizer_s", 0.01}}},
                        {"stage_memory", nlohmann::json::array()}};
  for (std::size_t s = 0; s < stages; ++s)
    doc["stage_memory"].push_back({{"stage", s},
                                   {"weights_gib", 4.0},
                                   {"gradients_gib", 8.0},
                                   {"optimizer_gib", 24.0},
                                   {"activations_gib", 20.0 - static_cast<double>(s)},
                                   {"logits_gib", 0.0},
                                   {"buffers_gib", 0.5},
                                   {"framework_gib", 3.0},
                                   {"total_gib", 59.5 - static_cast<double>(s)}});
  return doc;
}

TimelineChart one_op_per_stage(std::size_t stages) {
  TimelineChart t{"1F1B", {}};
  for (std::size_t s = 0; s < stages; ++s)
    t.rows.push_back({"stage " + std::to_string(s), {{0.1 * s, 0.5, OpKind::forward, 0}}});
  return t;
}

TEST(EstimatePage, HasItsChartsAndOneMemoryRowPerStage) {
  const std::string html = estimate_page_html(estimate_doc(4), "tp=4,pp=4", one_op_per_stage(4));
  EXPECT_EQ(report_testing::markup_problem(html), "");
  EXPECT_NE(html.find("<main data-report=\"estimate\">"), std::string::npos);
  for (const char* chart : {"time-breakdown", "stage-memory", "timeline"})
    EXPECT_NE(html.find(std::string("data-chart=\"") + chart + "\""), std::string::npos) << chart;
  for (int s = 0; s < 4; ++s)
    EXPECT_NE(html.find("data-json=\"stage_memory[" + std::to_string(s) + "].total_gib\""), std::string::npos) << s;
  EXPECT_NE(html.find("data-json=\"mfu\" data-value=\"0.5\" data-scale=\"100\">50.0%<"), std::string::npos);
}

TEST(EstimatePage, AMissingFieldIsAnError) {
  nlohmann::json doc = estimate_doc(2);
  doc.erase("stage_memory");
  EXPECT_EQ(tessera::testing::thrown_field([&] { estimate_page_html(doc, "", one_op_per_stage(2)); }), "report");
  doc = estimate_doc(2);
  doc["breakdown"].erase("bubble_s");
  EXPECT_EQ(tessera::testing::thrown_field([&] { estimate_page_html(doc, "", one_op_per_stage(2)); }), "report");
}

}  // namespace
}  // namespace tessera::report
