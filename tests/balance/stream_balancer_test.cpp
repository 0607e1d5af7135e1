// The stream balancer: its invariants over 10,000 random batches (every sample drawn is placed
// exactly once or still waits, no slot over the cap, the counts add up, the same input gives the
// same result); the published ordering on wlb-like (WLB-LLM, OSDI'25, Table 2 within one global
// batch: none 1.44 > fixed-length greedy 1.41 > WLB-LLM 1.05) with wlb under 1.05, at most two
// outlier queues and under one step of mean delay; and its errors.
#include "balance/stream_balancer.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include "balance/sample_cost.h"
#include "balance/stream_metrics.h"
#include "balance/synthetic_mix.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/error.h"

namespace tessera {
namespace {

constexpr int kRandomBatches = 10'000;
constexpr BalanceMethod kMethods[] = {BalanceMethod::none, BalanceMethod::fixed_greedy, BalanceMethod::lpt,
                                      BalanceMethod::kk, BalanceMethod::wlb};

struct Stream {
  std::vector<std::int64_t> tokens;
  std::vector<double> time_s;
};

// Attention-like costs: time = tokens + tokens^2 / 1000 (quadratic past a thousand tokens).
Stream random_stream(std::mt19937_64& rng, int n, std::int64_t max_len) {
  Stream s;
  for (int i = 0; i < n; ++i) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    const auto t = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::pow(u, 3.0) * static_cast<double>(max_len)));
    s.tokens.push_back(t);
    s.time_s.push_back(static_cast<double>(t) + static_cast<double>(t) * static_cast<double>(t) / 1000.0);
  }
  return s;
}

StreamSettings random_settings(std::mt19937_64& rng) {
  StreamSettings st;
  st.dp = static_cast<int>(rng() % 4) + 1;
  st.microbatches = static_cast<int>(rng() % 4) + 1;
  st.method = kMethods[rng() % 5];
  const bool equal = rng() % 4 == 0;
  st.one_step = st.method == BalanceMethod::kk || rng() % 4 == 0;
  st.count = equal && st.one_step ? CountMode::equal : CountMode::free;  // streams place by the cap
  st.max_tokens = st.method == BalanceMethod::kk || (st.one_step && rng() % 2) ? 0 : 64 + static_cast<std::int64_t>(rng() % 4000);
  st.steps = st.one_step ? 1 : static_cast<int>(rng() % 6) + 1;
  st.filler_s_per_token = 1.0;
  return st;
}

TEST(StreamBalancer, InvariantsHoldOn10000RandomBatches) {
  std::mt19937_64 rng(6);
  int carried_cases = 0, queued_cases = 0;
  for (int k = 0; k < kRandomBatches; ++k) {
    const StreamSettings st = random_settings(rng);
    const std::int64_t max_len = st.max_tokens > 0 ? st.max_tokens : 4000;
    const Stream s = random_stream(rng, static_cast<int>(rng() % 120), max_len);
    const StreamResult r = balance_stream(s.tokens, s.time_s, st);
    const auto problems = stream_violations(r, s.tokens, s.time_s, st);
    ASSERT_TRUE(problems.empty()) << "batch " << k << ", method " << to_string(st.method) << ": " << problems.front();
    ASSERT_LE(r.outlier_queues, 2);
    if (st.one_step && st.max_tokens == 0) {
      ASSERT_EQ(r.n_assigned, static_cast<std::int64_t>(s.tokens.size()));
    }
    carried_cases += r.n_carried > 0;
    queued_cases += r.outlier_queues > 0;
    if (k % 10 == 0) {  // same input, same answer
      const StreamResult again = balance_stream(s.tokens, s.time_s, st);
      ASSERT_EQ(again.n_in, r.n_in);
      ASSERT_EQ(again.carried, r.carried);
      for (std::size_t step = 0; step < r.steps.size(); ++step)
        for (std::size_t p = 0; p < r.steps[step].placements.size(); ++p) {
          ASSERT_EQ(again.steps[step].placements[p].item, r.steps[step].placements[p].item);
          ASSERT_EQ(again.steps[step].placements[p].slot, r.steps[step].placements[p].slot);
        }
    }
  }
  EXPECT_GT(carried_cases, 100) << "the cases should exercise carry-over";
  EXPECT_GT(queued_cases, 100) << "the cases should exercise the outlier queues";
}

TEST(StreamBalancer, TheCheckCatchesABrokenResult) {
  std::mt19937_64 rng(1);
  const Stream s = random_stream(rng, 50, 1000);
  StreamSettings st;
  st.dp = 2;
  st.microbatches = 2;
  st.max_tokens = 1000;
  st.steps = 3;
  st.method = BalanceMethod::lpt;
  StreamResult r = balance_stream(s.tokens, s.time_s, st);
  ASSERT_TRUE(stream_violations(r, s.tokens, s.time_s, st).empty());
  StreamResult twice = r;
  twice.steps[0].placements.push_back(twice.steps[0].placements[0]);
  EXPECT_FALSE(stream_violations(twice, s.tokens, s.time_s, st).empty());
  StreamResult lost = r;
  lost.steps[0].placements.pop_back();
  EXPECT_FALSE(stream_violations(lost, s.tokens, s.time_s, st).empty());
  StreamResult over = r;
  st.max_tokens = 10;
  EXPECT_FALSE(stream_violations(over, s.tokens, s.time_s, st).empty());
}

struct WlbRun {
  LoadBalance balance;
  StreamResult result;
};

WlbRun run_wlb_like(BalanceMethod method, std::uint64_t seed) {
  const ModelSpec model = builtin_model("llama3-8b");
  const SampleCostModel costs = make_sample_cost_model(model, find_gpu("h100-sxm-80gb"), 131072);
  const auto samples = synthetic_samples(SyntheticMix::wlb_like, 8000, seed);
  Stream s;
  for (const SampleTokens& x : samples) {
    s.tokens.push_back(x.backbone_tokens());
    s.time_s.push_back(sample_cost(costs, x).total_s());
  }
  StreamSettings st;
  st.dp = 1;
  st.microbatches = 4;
  st.max_tokens = 131072;
  st.steps = 50;
  st.method = method;
  st.filler_s_per_token = costs.backbone.linear_s_per_token;
  WlbRun run;
  run.result = balance_stream(s.tokens, s.time_s, st);
  EXPECT_FALSE(run.result.ran_out);
  EXPECT_TRUE(stream_violations(run.result, s.tokens, s.time_s, st).empty());
  run.balance = mean_load_balance(run.result, s.time_s, st.slots());
  return run;
}

TEST(StreamBalancer, WlbLikeFollowsThePublishedOrderingAndMeetsItsTargets) {
  for (std::uint64_t seed : {0, 1, 2}) {
    const WlbRun none = run_wlb_like(BalanceMethod::none, seed);
    const WlbRun fixed = run_wlb_like(BalanceMethod::fixed_greedy, seed);
    const WlbRun wlb = run_wlb_like(BalanceMethod::wlb, seed);
    EXPECT_GT(none.balance.imbalance, fixed.balance.imbalance) << "seed " << seed;
    EXPECT_GT(fixed.balance.imbalance, wlb.balance.imbalance) << "seed " << seed;
    // WLB-LLM's 1.05 target, where the data allow it; where one long document alone lifts the
    // lower bound (no balancer can go below it) above 1.05, within 2% of that bound.
    EXPECT_LE(wlb.balance.imbalance, std::max(1.05, 1.02 * wlb.balance.lower_bound))
        << "seed " << seed << ", lower bound " << wlb.balance.lower_bound;
    EXPECT_GE(wlb.balance.imbalance, wlb.balance.lower_bound) << "seed " << seed;
    EXPECT_LE(wlb.result.outlier_queues, 2);
    EXPECT_GT(wlb.result.outlier_queues, 0) << "wlb-like has outliers";
    EXPECT_LE(wlb.result.mean_delay_steps, 1.0);
    EXPECT_LE(wlb.result.max_delay_steps, [] {
      StreamSettings w;
      w.method = BalanceMethod::wlb;
      w.max_tokens = 131072;
      return delay_bound_steps(w);
    }());
    for (const WlbRun* r : {&none, &fixed, &wlb})
      EXPECT_EQ(r->result.n_assigned + r->result.n_carried, r->result.n_in);
    if (seed == 0) {
      RecordProperty("none", std::to_string(none.balance.imbalance));
      RecordProperty("fixed_greedy", std::to_string(fixed.balance.imbalance));
      RecordProperty("wlb", std::to_string(wlb.balance.imbalance));
      RecordProperty("wlb_mean_delay_steps", std::to_string(wlb.result.mean_delay_steps));
    }
  }
}

TEST(StreamBalancer, StepsFillTheirBudgetAndCarryOverComesFirst) {
  // Ten samples of 60 tokens, two slots of 100: each step's budget (200) takes three samples,
  // but only one fits per slot, so one is carried over and goes first in the next step.
  const std::vector<std::int64_t> tokens(10, 60);
  const std::vector<double> time(10, 1.0);
  StreamSettings st;
  st.dp = 2;
  st.max_tokens = 100;
  st.steps = 3;
  st.method = BalanceMethod::lpt;
  const StreamResult r = balance_stream(tokens, time, st);
  ASSERT_EQ(r.steps.size(), 3u);
  EXPECT_EQ(r.steps[0].placements.size(), 2u);
  EXPECT_EQ(r.steps[1].placements[0].item, 2) << "the carried sample goes first";
  EXPECT_EQ(r.steps[1].placements[0].arrival_step, 0);
  EXPECT_EQ(r.n_assigned, 6);
  EXPECT_EQ(r.n_in, 7);  // 3 + 2 + 2 drawn: each step tops the pool up to 3 x 60 <= 200
  EXPECT_EQ(r.n_carried, 1);
  EXPECT_DOUBLE_EQ(r.mean_delay_steps, 2.0 / 6.0);
}

TEST(StreamBalancer, BadSettingsNameTheirField) {
  auto field_of = [](StreamSettings st, std::vector<std::int64_t> tokens = {10}) {
    const std::vector<double> time(tokens.size(), 1.0);
    return testing::thrown_field([&] { balance_stream(tokens, time, st); });
  };
  StreamSettings ok;
  ok.max_tokens = 100;
  EXPECT_EQ(field_of(ok), "<no error>");
  StreamSettings s = ok;
  s.dp = 0;
  EXPECT_EQ(field_of(s), "dp");
  s = ok;
  s.microbatches = -2;
  EXPECT_EQ(field_of(s), "microbatches");
  s = ok;
  s.max_tokens = 0;
  EXPECT_EQ(field_of(s), "max-tokens");  // steps need a budget
  s = ok;
  s.method = BalanceMethod::kk;
  EXPECT_EQ(field_of(s), "method");  // kk has no cap
  s = ok;
  s.steps = 0;
  EXPECT_EQ(field_of(s), "steps");
  EXPECT_EQ(field_of(ok, {10, 101}), "max-tokens");  // a sample longer than the cap
  EXPECT_EQ(parse_balance_method("fixed-greedy"), BalanceMethod::fixed_greedy);
  EXPECT_THROW(parse_balance_method("greedy"), Error);
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// A cap below some samples names the cap every sample fits, the input's longest (issue 32: naming
// the first long sample sent the user on to fail at the next), and that cap then balances.
TEST(StreamBalancer, ACapTooSmallNamesTheLongestSample) {
  const std::vector<std::int64_t> tokens = {100, 5000, 200, 9000, 300};
  const std::vector<double> time_s = {1, 50, 2, 90, 3};
  StreamSettings st;
  st.dp = 2;
  st.microbatches = 1;
  st.one_step = true;
  st.steps = 1;
  st.max_tokens = 1000;
  try {
    (void)balance_stream(tokens, time_s, st);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "max-tokens");
    EXPECT_NE(std::string(e.what()).find("(allowed: at least 9000)"), std::string::npos) << e.what();
  }
  st.max_tokens = 9000;
  const StreamResult r = balance_stream(tokens, time_s, st);
  EXPECT_EQ(r.n_assigned, 5);
}

}  // namespace
}  // namespace tessera
