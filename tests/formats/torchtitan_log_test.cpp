// torchtitan step lines: the fixtures' numbers, the iteration time from tps, round trips.
#include <gtest/gtest.h>

#include "common/log_fixture.h"

#include <fstream>
#include <sstream>

#include "common/thrown_field.h"
#include "core/error.h"
#include "formats/torchtitan_log.h"

namespace tessera {
namespace {

using testing::log_fixture;

using testing::thrown_field;


TEST(TorchtitanLog, ReadsThePrExcerptsNumbers) {
  const TrainingLog log = parse_training_log(log_fixture("torchtitan_rank0.log"), "t");
  ASSERT_EQ(log.iterations.size(), 9u);
  const LogIteration& first = log.iterations[0];  // coloured step 1
  EXPECT_EQ(first.iteration, 1);
  EXPECT_DOUBLE_EQ(*first.tokens_per_s_per_gpu, 1902);
  const LogIteration& it = log.iterations[2];  // PR #3393: step 15
  EXPECT_EQ(it.iteration, 15);
  EXPECT_DOUBLE_EQ(*it.loss, 3.10680);
  EXPECT_DOUBLE_EQ(*it.memory_gib, 9.46);
  EXPECT_DOUBLE_EQ(*it.tokens_per_s_per_gpu, 7334);
  EXPECT_DOUBLE_EQ(*it.tflops_per_gpu, 0.53);
  EXPECT_DOUBLE_EQ(*it.mfu_pct, 0.17);
  EXPECT_DOUBLE_EQ(*log.peak_memory_gib, 9.46);
  EXPECT_EQ(log.arguments.at("dp_shard"), "2");
  EXPECT_EQ(log.arguments.at("world_size"), "2");
  EXPECT_EQ(log.arguments.at("tokens_per_train_step"), "16384");
}

TEST(TorchtitanLog, IterationTimeIsTokensPerStepOverGpusTimesTps) {
  const TrainingLog log = parse_training_log(log_fixture("torchtitan_rank0.log"), "t");
  // 16384 tokens per step over 2 GPUs at 7,334 tokens/s/GPU.
  EXPECT_DOUBLE_EQ(log.iterations[2].iteration_time_s, 16384.0 / (2 * 7334.0));
  // Closed form: time x GPUs x tps gives back the step's tokens.
  for (const LogIteration& it : log.iterations)
    EXPECT_NEAR(it.iteration_time_s * 2 * *it.tokens_per_s_per_gpu, 16384.0, 1e-9);
  EXPECT_EQ(log.warmup_iterations, 1u);  // step 1; 10% of 21 = 2.1 < 14
}

TEST(TorchtitanLog, OldMeshLineGivesTheGpusAndTheCallerTheTokens) {
  const TrainingLog unknown = parse_training_log(log_fixture("torchtitan_old_mesh.log"), "o");
  EXPECT_EQ(unknown.arguments.at("world_size"), "8");
  EXPECT_EQ(thrown_field([&] { unknown.steady_iteration_time_s(); }), "log:o:4");
  const TrainingLog known = parse_training_log(log_fixture("torchtitan_old_mesh.log"), "o", {.tokens_per_step = 65536, .gpus = 0});
  EXPECT_DOUBLE_EQ(known.iterations[1].iteration_time_s, 65536.0 / (8 * 168877.0));
}

TEST(TorchtitanLog, RoundTripsItsStepLines) {
  for (const char* name : {"torchtitan_rank0.log", "torchtitan_old_mesh.log"}) {
    const TrainingLog log = parse_training_log(log_fixture(name), name);
    std::string text;
    for (const LogIteration& it : log.iterations) text += torchtitan_step_line(it) + "\n";
    const TrainingLog back = parse_training_log(text, "r");
    ASSERT_EQ(back.iterations.size(), log.iterations.size()) << name;
    for (std::size_t i = 0; i < log.iterations.size(); ++i) {
      EXPECT_EQ(back.iterations[i].iteration, log.iterations[i].iteration);
      EXPECT_EQ(back.iterations[i].loss.has_value(), log.iterations[i].loss.has_value());
      EXPECT_NEAR(*back.iterations[i].loss, *log.iterations[i].loss, 5e-6);  // {:8.5f}
      EXPECT_EQ(back.iterations[i].memory_gib, log.iterations[i].memory_gib);
      EXPECT_EQ(back.iterations[i].tokens_per_s_per_gpu, log.iterations[i].tokens_per_s_per_gpu);
      EXPECT_EQ(back.iterations[i].tflops_per_gpu, log.iterations[i].tflops_per_gpu);
      EXPECT_EQ(back.iterations[i].mfu_pct, log.iterations[i].mfu_pct);
    }
  }
}

TEST(TorchtitanLog, MfuNotAvailableAndMissingTpsAreRead) {
  const LogIteration it = parse_torchtitan_step_line("step: 10  loss:  7.80000  tps: 6,543  tflops: 380.00  mfu: N/A", 3, "f");
  EXPECT_FALSE(it.mfu_pct.has_value());
  EXPECT_DOUBLE_EQ(*it.tokens_per_s_per_gpu, 6543);
  EXPECT_EQ(thrown_field([&] { parse_torchtitan_step_line("step: 10  loss:  7.80000  memory:", 3, "f"); }), "log:f:3");
}

TEST(TorchtitanLog, PrintedConfigIsFlattened) {
  const std::string text =
      "[titan] 2026-01-01 00:00:00,000 - root - INFO - Running with configs: {\n"
      "  \"parallelism\": {\n    \"tensor_parallel_degree\": 2\n  }\n}\n"
      "[titan] 2026-01-01 00:00:01,000 - root - INFO - step:  1  loss:  8.00000  tps: 1,000\n"
      "[titan] 2026-01-01 00:00:02,000 - root - INFO - step:  2  loss:  7.00000  tps: 2,000\n";
  const TrainingLog log = parse_training_log(text, "c");
  EXPECT_EQ(log.arguments.at("parallelism.tensor_parallel_degree"), "2");
  EXPECT_EQ(log.arguments_line, 1u);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// Found by fuzz_torchtitan_config (issue 30): a printed config that is valid JSON but not an
// object is refused naming its line, not flattened (nlohmann threw from it.key()).
TEST(TorchtitanLog, PrintedConfigThatIsNoObjectIsRefused) {
  for (const char* config : {"7", "[1, 2]", "\"text\""}) {
    const std::string text = std::string("[titan] 2026-01-01 00:00:00,000 - root - INFO - Running with configs: [") +
                             config + "]\n" +
                             "[titan] 2026-01-01 00:00:01,000 - root - INFO - step:  1  loss:  8.00000  tps: 1,000\n"
                             "[titan] 2026-01-01 00:00:02,000 - root - INFO - step:  2  loss:  7.00000  tps: 2,000\n";
    try {
      (void)parse_training_log(text, "c");
      ADD_FAILURE() << config;
    } catch (const Error& e) {
      EXPECT_EQ(e.field(), "log:c:1") << e.what();
    }
  }
}

}  // namespace
}  // namespace tessera
