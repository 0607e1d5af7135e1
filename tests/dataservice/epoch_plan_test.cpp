// The epoch plan (dataservice/epoch_plan.h): every sample in exactly one micro-batch of one rank,
// every micro-batch under the token cap, ranks in lockstep, the same plan for the same seed and a
// different order for another epoch; a sample the cap cannot hold is named.
#include "dataservice/epoch_plan.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/error.h"
#include "core/seeded_random.h"
#include "balance/microbatch_order.h"

namespace tessera {
namespace {

std::vector<SampleTokens> mixed_samples(int n, std::uint64_t seed) {
  SeededRandom rng(seed);
  std::vector<SampleTokens> out(static_cast<std::size_t>(n));
  for (SampleTokens& s : out) {
    s.text_tokens = {1 + static_cast<std::int64_t>(rng.below(400))};
    if (rng.uniform() < 0.6) s.image_tokens = {576};
  }
  return out;
}

std::vector<double> times_of(const std::vector<SampleTokens>& samples) {
  std::vector<double> t;
  for (const SampleTokens& s : samples) t.push_back(1e-6 * static_cast<double>(s.backbone_tokens()));
  return t;
}

EpochSettings settings(std::uint64_t seed = 7, std::int64_t epoch = 0) {
  EpochSettings e;
  e.ranks = 3;
  e.microbatches = 2;
  e.max_tokens = 2048;
  e.seed = seed;
  e.epoch = epoch;
  return e;
}

TEST(EpochPlan, EverySampleIsInExactlyOneMicroBatchUnderTheCap) {
  for (std::uint64_t seed : {1, 2, 3}) {
    const auto samples = mixed_samples(500, seed);
    const EpochPlan plan = plan_epoch(samples, times_of(samples), settings(seed));
    std::vector<int> seen(samples.size(), 0);
    ASSERT_EQ(plan.tasks.size(), static_cast<std::size_t>(3 * plan.per_rank));
    for (const MicroBatchTask& t : plan.tasks) {
      std::int64_t tokens = 0;
      for (std::int64_t id : t.samples) {
        ++seen[static_cast<std::size_t>(id)];
        tokens += samples[static_cast<std::size_t>(id)].backbone_tokens();
      }
      EXPECT_LE(tokens, 2048);
      EXPECT_EQ(&plan.at(t.rank, t.position), &t);
      EXPECT_EQ(t.step * 2 + t.microbatch, t.position);
    }
    EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int c) { return c == 1; }));
  }
}

TEST(EpochPlan, TheSameSeedGivesTheSamePlanAndAnotherEpochAnotherOrder) {
  const auto samples = mixed_samples(300, 5);
  const EpochPlan a = plan_epoch(samples, times_of(samples), settings(11, 0));
  const EpochPlan b = plan_epoch(samples, times_of(samples), settings(11, 0));
  const EpochPlan c = plan_epoch(samples, times_of(samples), settings(11, 1));
  ASSERT_EQ(a.tasks.size(), b.tasks.size());
  for (std::size_t i = 0; i < a.tasks.size(); ++i) EXPECT_EQ(a.tasks[i].samples, b.tasks[i].samples);
  EXPECT_NE(a.tasks.front().samples, c.tasks.front().samples);
}

TEST(EpochPlan, ASampleLongerThanTheCapIsNamed) {
  auto samples = mixed_samples(20, 9);
  samples[13].text_tokens = {5000};
  try {
    plan_epoch(samples, times_of(samples), settings());
    FAIL() << "accepted a sample longer than --max-tokens";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "sample 13");
  }
}

TEST(EpochPlan, BadSettingsNameTheirFlag) {
  const auto samples = mixed_samples(10, 1);
  for (const auto& [field, change] : std::vector<std::pair<std::string, void (*)(EpochSettings&)>>{
           {"--ranks", [](EpochSettings& e) { e.ranks = 0; }},
           {"--microbatches", [](EpochSettings& e) { e.microbatches = -1; }},
           {"--max-tokens", [](EpochSettings& e) { e.max_tokens = 0; }},
           {"--method", [](EpochSettings& e) { e.method = BalanceMethod::kk; }},
       }) {
    EpochSettings e = settings();
    change(e);
    try {
      plan_epoch(samples, times_of(samples), e);
      ADD_FAILURE() << field << " accepted";
    } catch (const Error& err) {
      EXPECT_EQ(err.field(), field);
    }
  }
}

// With a pipeline, each rank's micro-batches of a step are reordered (never split or moved to
// another step or rank), into an order whose simulated 1F1B makespan is no longer than the
// balancer's.
TEST(EpochPlan, APipelineReordersEachStepWithoutMovingSamplesAcrossSteps) {
  const auto samples = mixed_samples(400, 4);
  const auto times = times_of(samples);
  EpochSettings flat = settings(2);
  flat.microbatches = 6;
  EpochSettings piped = flat;
  piped.pipeline_stages = 4;
  const EpochPlan a = plan_epoch(samples, times, flat), b = plan_epoch(samples, times, piped);
  ASSERT_EQ(a.per_rank, b.per_rank);
  PipelineSimulator simulator;
  int reordered = 0;
  for (int r = 0; r < flat.ranks; ++r)
    for (std::int64_t first = 0; first < a.per_rank; first += 6) {
      std::multiset<std::vector<std::int64_t>> before, after;
      std::vector<double> time_a, time_b;
      std::vector<std::int32_t> given;
      for (int j = 0; j < 6; ++j) {
        before.insert(a.at(r, first + j).samples);
        after.insert(b.at(r, first + j).samples);
        double ta = 0, tb = 0;
        for (std::int64_t id : a.at(r, first + j).samples) ta += times[static_cast<std::size_t>(id)];
        for (std::int64_t id : b.at(r, first + j).samples) tb += times[static_cast<std::size_t>(id)];
        time_a.push_back(ta);
        time_b.push_back(tb);
        given.push_back(j);
      }
      EXPECT_EQ(before, after);
      EXPECT_LE(pipeline_makespan_s(time_b, given, 4, simulator), pipeline_makespan_s(time_a, given, 4, simulator) * (1 + 1e-12));
      reordered += time_a != time_b ? 1 : 0;
    }
  EXPECT_GT(reordered, 0);
}

}  // namespace
}  // namespace tessera
