// End-to-end checks of `tessera balance --per-batch-cp` (the real binary): the JSON document's
// figures agree with each other (best static = the fastest static row; gain from the two times;
// per-batch never slower than static and never faster than the bound); the long-video stream
// gains over its best static cp while video-like stays within its bound; bad input exits 2 with
// one stderr line naming the flag; without the flag, per-batch flags are refused.
#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_process.h"

namespace {

using namespace tessera::testing;
using Json = nlohmann::json;

class BalancePerBatchCli : public CliScratchTest {
 protected:
  BalancePerBatchCli() { command_ = {"balance", "--per-batch-cp"}; }

  Json run_json(std::vector<std::string> args) {
    args.push_back("--json");
    const RunResult r = run(args);
    EXPECT_EQ(r.exit_code, 0) << describe(r);
    return Json::parse(r.out);
  }

  void expect_bad_input(const std::vector<std::string>& args, const std::string& field) {
    const RunResult r = run(args);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(r.out.empty()) << describe(r);
    const std::string line = r.err.substr(0, r.err.find('\n'));
    EXPECT_EQ(line.size() + 1, r.err.size()) << "one line\n" << describe(r);
    EXPECT_TRUE(contains_word(line.substr(0, line.find("(allowed:")), field)) << "stderr should name " << field << "\n"
                                                                              << describe(r);
  }
};

void expect_consistent(const Json& j) {
  double fastest = std::numeric_limits<double>::infinity();
  int fastest_cp = 0;
  for (const Json& row : j["static"])
    if (!row["time_s"].is_null() && row["time_s"].get<double>() < fastest) {
      fastest = row["time_s"].get<double>();
      fastest_cp = row["cp"].get<int>();
    }
  EXPECT_EQ(j["best_static_cp"].get<int>(), fastest_cp);
  EXPECT_DOUBLE_EQ(j["static_time_s"].get<double>(), fastest);
  const double per_batch = j["per_batch_time_s"].get<double>(), bound = j["lower_bound_time_s"].get<double>();
  EXPECT_NEAR(j["gain"].get<double>(), fastest / per_batch - 1.0, 1e-9);
  EXPECT_LE(per_batch, fastest * (1 + 1e-9));
  EXPECT_GE(per_batch, bound * (1 - 1e-9));
  std::int64_t placed = 0;
  for (const auto& [cp, count] : j["microbatches_at_cp"].items()) placed += count.get<std::int64_t>();
  EXPECT_EQ(placed, j["microbatches"].get<std::int64_t>());
  EXPECT_LE(j["decision_ms"]["p99"].get<double>(), j["decision_ms"]["max"].get<double>());
}

TEST_F(BalancePerBatchCli, LongVideoBetweenCaptionsPaysVideoLikeDoesNot) {
  const Json paying = run_json({"--mix", "long-video:0.25,caption-like:0.75", "--gpus", "16", "--steps", "100"});
  expect_consistent(paying);
  EXPECT_EQ(paying["best_static_cp"].get<int>(), 16);
  EXPECT_GT(paying["gain"].get<double>(), 0.10);
  const Json video = run_json({"--mix", "video-like", "--dp", "4", "--cp", "2", "--steps", "100"});
  expect_consistent(video);
  EXPECT_EQ(video["gpus"].get<int>(), 8);
  EXPECT_LT(video["gain_bound"].get<double>(), 0.10);
}

TEST_F(BalancePerBatchCli, TableNamesTheFigures) {
  const RunResult r = run({"--mix", "interleaved-like", "--gpus", "8", "--steps", "20"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  for (const char* word : {"best static", "per batch", "bound", "decision"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word << "\n" << r.out;
}

TEST_F(BalancePerBatchCli, BadInputExitsTwoNamingTheFlag) {
  expect_bad_input({"--gpus", "8"}, "mix");
  expect_bad_input({"--mix", "video-like"}, "gpus");
  expect_bad_input({"--mix", "video-like", "--gpus", "0"}, "gpus");
  expect_bad_input({"--mix", "video-like", "--gpus", "12"}, "gpus");  // not whole nodes of 8
  expect_bad_input({"--mix", "video-like", "--gpus", "8", "--dp", "8"}, "gpus");
  expect_bad_input({"--mix", "video-like", "--dp", "2", "--cp", "0"}, "cp");
  expect_bad_input({"--mix", "nosuch", "--gpus", "8"}, "mix");
  expect_bad_input({"--mix", "video-like:abc", "--gpus", "8"}, "mix");
  expect_bad_input({"--mix", "video-like:-1", "--gpus", "8"}, "mix");
  expect_bad_input({"--mix", "audio-like", "--gpus", "8", "--steps", "2"}, "mix");
  expect_bad_input({"--mix", "video-like", "--gpus", "8", "--steps", "0"}, "steps");
  expect_bad_input({"--mix", "video-like", "--gpus", "8", "--step-tokens", "4096"}, "step_tokens");
  expect_bad_input({"--mix", "video-like", "--gpus", "8", "--recompute", "most"}, "recompute");
  expect_bad_input({"--mix", "long-video", "--gpus", "2", "--steps", "2"}, "gpus");  // no room on 2 GPUs
  expect_bad_input({"--mix", "video-like", "--gpus", "8", "--synthetic", "wlb-like"}, "per-batch-cp");
}

TEST_F(BalancePerBatchCli, PerBatchFlagsNeedTheFlag) {
  command_ = {"balance"};
  expect_bad_input({"--synthetic", "wlb-like", "--dp", "1", "--microbatches", "1", "--n", "5", "--mix", "video-like"},
                   "mix");
  expect_bad_input({"--synthetic", "wlb-like", "--dp", "1", "--microbatches", "1", "--n", "5", "--gpus", "8"}, "gpus");
}

}  // namespace
