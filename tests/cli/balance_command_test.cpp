// End-to-end checks of `tessera balance` (the real binary, under `timeout 60`): the issue's
// wlb-like run gives none > fixed-greedy > wlb with wlb <= 1.05 (or 1.02 x its lower bound), at
// most two outlier queues, under one step of mean delay and n_assigned + n_carried = n_in; mllm-like balanced with lpt keeps the
// encoder within 1.05 x its lower bound while a random assignment does not; samples files work;
// bad input exits 2 with one stderr line naming the field.
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_process.h"

namespace {

using namespace tessera::testing;
namespace fs = std::filesystem;
using Json = nlohmann::json;

class BalanceCli : public CliScratchTest {
 protected:
  BalanceCli() { command_ = {"balance"}; }

  void expect_bad_input(const std::vector<std::string>& args, std::initializer_list<std::string> fields) {
    const RunResult r = run(args);
    EXPECT_EQ(r.signal, 0) << describe(r);
    EXPECT_EQ(r.exit_code, 2) << describe(r);
    EXPECT_TRUE(r.out.empty()) << describe(r);
    ASSERT_FALSE(r.err.empty()) << describe(r);
    const std::string line = r.err.substr(0, r.err.find('\n'));
    EXPECT_EQ(line.size() + 1, r.err.size()) << "one line\n" << describe(r);
    EXPECT_EQ(line.find("terminate called"), std::string::npos) << describe(r);
    const std::string head = line.substr(0, line.find("(allowed:"));
    bool named = false;
    for (const auto& f : fields) named = named || contains_word(head, f);
    EXPECT_TRUE(named) << "stderr should name " << *fields.begin() << "\n" << describe(r);
  }

};

const std::vector<std::string> kWlbRun = {"--synthetic", "wlb-like", "--dp", "1", "--microbatches", "4",
                                          "--max-tokens", "131072", "--steps", "50"};

std::vector<std::string> with(std::vector<std::string> args, std::initializer_list<std::string> more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

TEST_F(BalanceCli, WlbLikeOrderingAndTargets) {
  const Json none = run_json(with(kWlbRun, {"--method", "none"}));
  const Json fixed = run_json(with(kWlbRun, {"--method", "fixed-greedy"}));
  const Json wlb = run_json(with(kWlbRun, {"--method", "wlb"}));
  for (const Json* j : {&none, &fixed, &wlb}) {
    for (const char* key : {"schema_version", "imbalance", "lower_bound", "n_in", "n_assigned", "n_carried",
                            "mean_delay_steps", "time_ms", "outlier_queues", "random_imbalance", "modules"})
      ASSERT_TRUE(j->contains(key)) << key;
    EXPECT_EQ((*j)["n_assigned"].get<long>() + (*j)["n_carried"].get<long>(), (*j)["n_in"].get<long>());
    EXPECT_GE((*j)["imbalance"].get<double>(), (*j)["lower_bound"].get<double>());
    EXPECT_EQ((*j)["steps"], 50);
  }
  EXPECT_GT(none["imbalance"].get<double>(), fixed["imbalance"].get<double>());
  EXPECT_GT(fixed["imbalance"].get<double>(), wlb["imbalance"].get<double>());
  // WLB-LLM's 1.05 where the data allow it, else within 2% of the lower bound no balancer beats.
  EXPECT_LE(wlb["imbalance"].get<double>(), std::max(1.05, 1.02 * wlb["lower_bound"].get<double>()));
  EXPECT_LE(wlb["outlier_queues"].get<int>(), 2);
  EXPECT_LE(wlb["mean_delay_steps"].get<double>(), 1.0);
  // Deterministic for a seed: the same run twice prints the same balance.
  const Json again = run_json(with(kWlbRun, {"--method", "wlb"}));
  EXPECT_EQ(again["imbalance"], wlb["imbalance"]);
  EXPECT_EQ(again["n_carried"], wlb["n_carried"]);
}

TEST_F(BalanceCli, MllmLikeEncoderLoadNearItsLowerBoundUnlikeRandom) {
  const Json j = run_json({"--synthetic", "mllm-like", "--n", "200000", "--dp", "1024", "--microbatches", "1",
                           "--method", "lpt"});
  ASSERT_TRUE(j["modules"].contains("encoder"));
  const Json& encoder = j["modules"]["encoder"];
  EXPECT_LE(encoder["imbalance"].get<double>(), 1.05 * encoder["lower_bound"].get<double>());
  EXPECT_GT(encoder["random_imbalance"].get<double>(), 1.05 * encoder["lower_bound"].get<double>());
  EXPECT_EQ(j["n_assigned"], 200000);
  EXPECT_EQ(j["n_carried"], 0);
  EXPECT_TRUE(j["modules"].contains("generator")) << "30% of mllm-like samples generate an image";
}

TEST_F(BalanceCli, SamplesFileOneStepAndSteps) {
  std::string lines;
  for (int i = 0; i < 40; ++i) lines += "{\"text_tokens\": " + std::to_string(100 + 37 * i) + "}\n";
  lines += "\n{\"text_tokens\": [40, 60], \"image_tokens\": [576], \"generated_tokens\": 256}\n";
  const std::string path = file("samples.jsonl", lines);
  const Json all = run_json({"--samples", path, "--dp", "2", "--microbatches", "2", "--method", "kk"});
  EXPECT_EQ(all["n_in"], 41);
  EXPECT_EQ(all["n_assigned"], 41);
  EXPECT_EQ(all["steps"], 1);
  const Json first = run_json({"--samples", path, "--dp", "2", "--microbatches", "2", "--n", "10"});
  EXPECT_EQ(first["n_in"], 10);
  const Json steps = run_json({"--samples", path, "--dp", "2", "--microbatches", "1", "--max-tokens", "2000",
                               "--steps", "100", "--method", "lpt"});
  EXPECT_EQ(steps["n_in"], 41) << "the file runs out: every sample drawn";
  EXPECT_EQ(steps["n_carried"], 0);
}

TEST_F(BalanceCli, NoSampleIsHeldBack) {
  // Issue 13, S1: wlb shed a step's only sample to the next step, forever; a lone outlier waited
  // in its queue for others to balance it.
  for (const char* text : {"{\"text_tokens\": 5000}\n", "{\"text_tokens\": 5000}\n{\"text_tokens\": 5000}\n"
                                                        "{\"text_tokens\": 5000}\n",
                           "{\"text_tokens\": 20000}\n"}) {
    const std::string path = file("few.jsonl", text);
    const Json j = run_json({"--samples", path, "--dp", "1", "--microbatches", "2", "--max-tokens", "40000",
                             "--steps", "100", "--method", "wlb"});
    EXPECT_EQ(j["n_carried"], 0) << text;
    EXPECT_EQ(j["n_assigned"], j["n_in"]) << text;
    EXPECT_EQ(j["max_delay_steps"], 0) << text;
  }
}

TEST_F(BalanceCli, WorkLimitsAreRefusedUpFrontNamingTheFlag) {
  // Issue 13, D3: every accepted input runs in bounded time and memory.
  const std::vector<std::string> base = {"--synthetic", "wlb-like", "--dp", "1", "--microbatches", "4"};
  expect_bad_input(with(base, {"--steps", "3", "--max-tokens", "2000000000000"}), {"max-tokens"});
  expect_bad_input({"--synthetic", "wlb-like", "--dp", "1000", "--microbatches", "1000", "--max-tokens", "131072",
                    "--steps", "100"},
                   {"steps"});
  expect_bad_input(with(base, {"--n", "2000000"}), {"n"});
}

TEST_F(BalanceCli, TableNamesTheFigures) {
  const RunResult r = run({"--synthetic", "mllm-like", "--dp", "8", "--microbatches", "2", "--n", "1000"});
  EXPECT_EQ(r.exit_code, 0) << describe(r);
  for (const char* word : {"imbalance", "lower bound", "carried", "delay", "balancing", "encoder", "generator"})
    EXPECT_NE(r.out.find(word), std::string::npos) << word << "\n" << describe(r);
}

TEST_F(BalanceCli, BadInputExitsTwoNamingTheField) {
  const std::vector<std::string> base = {"--synthetic", "wlb-like", "--dp", "1", "--microbatches", "4"};
  expect_bad_input({"--dp", "1", "--microbatches", "1", "--n", "5"}, {"samples"});
  expect_bad_input({"--synthetic", "wlb-like", "--samples", "x.jsonl", "--dp", "1", "--microbatches", "1", "--n", "5"},
                   {"samples"});
  expect_bad_input({"--synthetic", "wlb-like", "--microbatches", "4", "--n", "5"}, {"dp"});
  expect_bad_input({"--synthetic", "wlb-like", "--dp", "1", "--n", "5"}, {"microbatches"});
  expect_bad_input(with(base, {"--n", "5", "--dp", "0"}), {"dp"});
  expect_bad_input(with(base, {"--n", "5", "--microbatches", "-3"}), {"microbatches"});
  expect_bad_input(with(base, {"--n", "5", "--method", "greedy"}), {"method"});
  expect_bad_input({"--synthetic", "caption", "--dp", "1", "--microbatches", "1", "--n", "5"}, {"synthetic"});
  expect_bad_input(base, {"steps"});                                   // neither --steps nor --n
  expect_bad_input(with(base, {"--steps", "3", "--n", "5"}), {"steps"});  // both
  expect_bad_input(with(base, {"--steps", "3"}), {"max-tokens"});      // a step budget needs a cap
  expect_bad_input(with(base, {"--steps", "0", "--max-tokens", "1000"}), {"steps"});
  expect_bad_input(with(base, {"--n", "5", "--max-tokens", "-1"}), {"max-tokens"});
  expect_bad_input(with(base, {"--n", "50", "--max-tokens", "1000", "--method", "kk"}), {"method"});
  expect_bad_input(with(base, {"--steps", "50", "--max-tokens", "1000"}), {"max-tokens"});  // documents over the cap
  expect_bad_input(with(base, {"--n", "0"}), {"n"});
  expect_bad_input(with(base, {"--n", "5", "--seed", "-1"}), {"seed"});
  expect_bad_input(with(base, {"--n", "5", "--model", "nosuch"}), {"model"});
  expect_bad_input(with(base, {"--n", "5", "--cluster", "nosuchgpu"}), {"gpu", "cluster"});
  expect_bad_input(with(base, {"--n", "5", "--dp", "abc"}), {"dp"});
  expect_bad_input(with(base, {"--n", "5", "--dp", "2000", "--microbatches", "1000"}), {"dp"});

  const std::string bad_line = file("bad.jsonl", "{\"text_tokens\": 10}\n{\"text_tokens\": -4}\n");
  expect_bad_input({"--samples", bad_line, "--dp", "1", "--microbatches", "1"}, {"samples:2.text_tokens"});
  const std::string typo = file("typo.jsonl", "{\"text_token\": 10}\n");
  expect_bad_input({"--samples", typo, "--dp", "1", "--microbatches", "1"}, {"samples:1.text_token"});
  const std::string broken = file("broken.jsonl", "{\"text_tokens\": 10\n");
  expect_bad_input({"--samples", broken, "--dp", "1", "--microbatches", "1"}, {"samples:1"});
  const std::string empty = file("empty.jsonl", "\n\n");
  expect_bad_input({"--samples", empty, "--dp", "1", "--microbatches", "1"}, {"samples"});
  const std::string small = file("small.jsonl", "{\"text_tokens\": 10}\n");
  expect_bad_input({"--samples", small, "--dp", "1", "--microbatches", "1", "--n", "2"}, {"n"});
  expect_bad_input({"--samples", (dir_ / "missing.jsonl").string(), "--dp", "1", "--microbatches", "1"}, {"samples"});
}

}  // namespace
