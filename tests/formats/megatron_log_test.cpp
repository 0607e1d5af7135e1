// Megatron-LM log lines: the fixture's numbers read exactly, round trips, dump and memory lines.
#include <gtest/gtest.h>

#include "common/log_fixture.h"

#include <fstream>
#include <sstream>

#include "common/thrown_field.h"
#include "core/error.h"
#include "formats/megatron_log.h"

namespace tessera {
namespace {

using testing::log_fixture;

using testing::thrown_field;


TEST(MegatronLog, ReadsTheIssueExcerptsNumbers) {
  const TrainingLog log = parse_training_log(log_fixture("megatron_mixtral_h100.log"), "m");
  ASSERT_EQ(log.iterations.size(), 3u);
  const LogIteration& it = log.iterations[1];  // issue #756: iteration 72
  EXPECT_EQ(it.iteration, 72);
  EXPECT_EQ(it.line, 61u);
  EXPECT_DOUBLE_EQ(it.iteration_time_s, 5.4707);  // "5470.7" ms
  EXPECT_DOUBLE_EQ(*it.tflops_per_gpu, 238.7);
  EXPECT_EQ(*it.global_batch, 128);
  EXPECT_DOUBLE_EQ(*it.loss, 1.820313);
}

TEST(MegatronLog, RoundTripsItsIterationLines) {
  const TrainingLog log = parse_training_log(log_fixture("megatron_mixtral_h100.log"), "m");
  std::string text;
  for (const LogIteration& it : log.iterations) text += megatron_iteration_line(it, 100) + "\n";
  const TrainingLog back = parse_training_log(text, "r");
  ASSERT_EQ(back.iterations.size(), log.iterations.size());
  for (std::size_t i = 0; i < log.iterations.size(); ++i) {
    EXPECT_EQ(back.iterations[i].iteration, log.iterations[i].iteration);
    EXPECT_EQ(back.iterations[i].iteration_time_s, log.iterations[i].iteration_time_s);
    EXPECT_EQ(back.iterations[i].tflops_per_gpu, log.iterations[i].tflops_per_gpu);
    EXPECT_EQ(back.iterations[i].global_batch, log.iterations[i].global_batch);
    EXPECT_EQ(back.iterations[i].loss, log.iterations[i].loss);
  }
}

TEST(MegatronLog, ReadsTheArgumentDumpAndThePeakMemory) {
  const TrainingLog log = parse_training_log(log_fixture("megatron_mixtral_h100.log"), "m");
  EXPECT_EQ(log.arguments_line, 6u);
  EXPECT_EQ(log.arguments.at("tensor_model_parallel_size"), "4");
  EXPECT_EQ(log.arguments.at("adam_eps"), "1e-08");  // a real line of the issue
  EXPECT_EQ(log.arguments.at("attention_backend"), "AttnBackend.auto");
  // The larger "max reserved" of the two ranks' reports: 59410.00 MiB.
  EXPECT_DOUBLE_EQ(*log.peak_memory_gib, 59410.0 / 1024.0);
}

TEST(MegatronLog, DumpWithoutEndOrWithAGarbledLineIsAnError) {
  std::string text = log_fixture("megatron_mixtral_h100.log");
  std::string cut = text;
  cut.replace(cut.find("-------------------- end of arguments"), 5, "xxxxx");
  EXPECT_EQ(thrown_field([&] { parse_training_log(cut, "m"); }), "log:m:6");
  std::string bad = text;
  bad.replace(bad.find("  tensor_model_parallel_size ...."), 33, "  tensor_model_parallel_size ..");
  EXPECT_NE(thrown_field([&] { parse_training_log(bad, "m"); }).find("log:m:"), std::string::npos);
}

TEST(MegatronLog, UnreadableMemoryReportIsAnError) {
  std::string text = log_fixture("megatron_mixtral_h100.log");
  text.replace(text.find("max reserved: 59410.00"), 22, "max reserved: 59,410");
  EXPECT_EQ(thrown_field([&] { parse_training_log(text, "m"); }), "log:m:59");
}

TEST(MegatronLog, IterationLineWithoutElapsedTimeIsAnError) {
  const std::string line = " [2024-04-06 03:02:12] iteration       71/     100 | consumed samples:         9088 | lm loss: 1.8E+00 |";
  EXPECT_EQ(thrown_field([&] { parse_megatron_iteration_line(line, 4, "f"); }), "log:f:4");
}

}  // namespace
}  // namespace tessera
