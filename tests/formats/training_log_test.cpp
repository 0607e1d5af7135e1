// Training logs: format detection, warm-up rule, rank prefixes, and the errors that name the line.
#include <gtest/gtest.h>

#include "common/log_fixture.h"

#include <fstream>
#include <sstream>

#include "common/thrown_field.h"
#include "core/error.h"
#include "formats/training_log.h"

namespace tessera {
namespace {

using testing::log_fixture;

using testing::thrown_field;


LogIteration entry(std::int64_t iteration, std::int64_t gbs = 128) {
  LogIteration it;
  it.iteration = iteration;
  it.line = static_cast<std::size_t>(iteration);
  it.global_batch = gbs;
  return it;
}

TEST(TrainingLog, DetectsEachFixturesFormat) {
  EXPECT_EQ(parse_training_log(log_fixture("megatron_mixtral_h100.log"), "m").format, "megatron-lm");
  EXPECT_EQ(parse_training_log(log_fixture("torchtitan_rank0.log"), "t").format, "torchtitan");
  EXPECT_EQ(parse_training_log(log_fixture("torchtitan_old_mesh.log"), "o").format, "torchtitan");
}

TEST(TrainingLog, WarmupDropsTheFirstEntryAndTheFirstTenPercent) {
  // Lines at 1 (is_first_iteration, off the grid of 10), 10, ..., 100: rule 2 drops 10, rule 3
  // every entry <= 10; so 1 and 10.
  std::vector<LogIteration> its = {entry(1)};
  for (int i = 10; i <= 100; i += 10) its.push_back(entry(i));
  EXPECT_EQ(warmup_count(its, true, "f"), 2u);
  // On the grid (log interval 1: 1, 2, ..., 50): rule 1 drops 1, rule 3 drops 2..5 (<= 5.0).
  std::vector<LogIteration> grid;
  for (int i = 1; i <= 50; ++i) grid.push_back(entry(i));
  EXPECT_EQ(warmup_count(grid, true, "f"), 5u);
  // torchtitan (no rule 2): steps 1, 10, 20: 1 dropped, 10 > 2.0 kept.
  EXPECT_EQ(warmup_count({entry(1), entry(10), entry(20)}, false, "f"), 1u);
}

TEST(TrainingLog, WarmupDropsABatchRampUpAndRefusesABatchThatReturns) {
  const std::vector<LogIteration> ramp = {entry(10, 32), entry(20, 64), entry(30, 128), entry(40, 128), entry(50, 128)};
  EXPECT_EQ(warmup_count(ramp, false, "f"), 2u);  // entries before the last change (at index 2)
  EXPECT_EQ(thrown_field([&] { warmup_count({entry(10, 64), entry(20, 128), entry(30, 64)}, false, "f"); }), "log:f:30");
}

TEST(TrainingLog, NoSteadyEntryIsAnError) {
  EXPECT_EQ(thrown_field([&] { warmup_count({entry(5)}, false, "f"); }), "log:f:5");
}

TEST(TrainingLog, SteadyTimeIsTheMedianAfterWarmup) {
  const TrainingLog log = parse_training_log(log_fixture("megatron_mixtral_h100.log"), "m");
  ASSERT_EQ(log.warmup_iterations, 1u);  // iteration 71 dropped; 10% of 73 drops nothing more
  EXPECT_DOUBLE_EQ(log.steady_iteration_time_s(), 0.5 * (5.4707 + 5.8299));
}

TEST(TrainingLog, StripsAnsiAndRankPrefixes) {
  EXPECT_EQ(strip_ansi("\x1b[31mstep:  1  \x1b[38;2;54;234;195mmemory\x1b[39m"), "step:  1  memory");
  const LogLine a = split_rank_prefix("[rank3]:[titan] x", 7);
  EXPECT_EQ(a.rank, "[rank3]");
  EXPECT_EQ(a.text, "[titan] x");
  EXPECT_EQ(split_rank_prefix("[default12]:hello", 1).rank, "[default12]");
  EXPECT_EQ(split_rank_prefix("[Rank 0] (after 10 iterations) memory", 1).rank, "");  // Megatron's own, not torchrun's
}

TEST(TrainingLog, TwoRanksInterleavedNameTheSecondRanksFirstLine) {
  std::string text = log_fixture("torchtitan_old_mesh.log");
  text += "[rank1]:[titan] 2025-06-26 18:23:14,680 - root - INFO - step:  4  loss:  8.0119  memory:  2.66GiB(2.80%)  tps: 175,000  tflops: 12.59  mfu: 1.27%\n";
  EXPECT_EQ(thrown_field([&] { parse_training_log(text, "x.log"); }), "log:x.log:6");
  // Unprefixed output of every rank repeats the step (PR #2389's log).
  EXPECT_EQ(thrown_field([&] { parse_training_log(log_fixture("torchtitan_interleaved.log"), "i.log"); }), "log:i.log:2");
}

TEST(TrainingLog, TruncatedLastLineIsAnError) {
  std::string text = log_fixture("megatron_mixtral_h100.log");
  text.resize(text.size() - 60);  // cut inside iteration 73's line
  EXPECT_EQ(thrown_field([&] { parse_training_log(text, "m"); }), "log:m:62");
  // A torchtitan line cut after a complete-looking number: no newline at the end.
  std::string titan = log_fixture("torchtitan_old_mesh.log");
  titan.resize(titan.find("tps: 175,100") + 8);
  EXPECT_EQ(thrown_field([&] { parse_training_log(titan, "t"); }), "log:t:5");
}

TEST(TrainingLog, GarbledNumberIsAnError) {
  std::string text = log_fixture("megatron_mixtral_h100.log");
  const std::size_t at = text.find("5470.7");
  text.replace(at, 6, "54x0.7");
  EXPECT_EQ(thrown_field([&] { parse_training_log(text, "m"); }), "log:m:61");
  std::string titan = log_fixture("torchtitan_rank0.log");
  titan.replace(titan.find("7,334"), 5, "73,34");  // not Python's {:,} grouping
  EXPECT_EQ(thrown_field([&] { parse_training_log(titan, "t"); }), "log:t:6");
}

TEST(TrainingLog, NoIterationLineIsAnError) {
  const std::string text = "hello\nWARNING: nothing to see\n";
  const std::string field = thrown_field([&] { parse_training_log(text, "empty.log"); });
  EXPECT_EQ(field, "log:empty.log:2");
}

TEST(TrainingLog, CheckpointLinesAreNotIterationLines) {
  std::string text = log_fixture("megatron_mixtral_h100.log");
  text += "  successfully saved checkpoint from iteration     100 to /ckpt [ t 1/4, p 1/1 ]\n";
  EXPECT_EQ(parse_training_log(text, "m").iterations.size(), 3u);
}

}  // namespace
}  // namespace tessera
