// No sample is held back: the stream balancer's delay bound (stream_balancer.h, rules 1-5) at
// scale and on the inputs that broke it. Over kPropertySamples samples per method and epoch
// x kEpochs (10^6 in Release; 10^5 under the sanitizers, which run ~10-30x slower), with the token budget
// changing between steps and the slot shape changing between epochs: every sample is placed
// exactly once per epoch, no delay exceeds delay_bound_steps, and the same seed gives the same
// assignment. Then the reproducers of issue 13 (a lone sample shed forever, a lone outlier
// queued forever, an all-outlier stream) and the limits that bound the work.
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "common/thrown_field.h"

#include "balance/stream_balancer.h"
#include "core/seeded_random.h"

namespace tessera {
namespace {

// Samples per epoch; two epochs put 10^6 samples through each method in Release.
#if defined(TESSERA_SANITIZED)
constexpr std::int64_t kPropertySamples = 50'000;
#else
constexpr std::int64_t kPropertySamples = 500'000;
#endif
constexpr int kEpochs = 2;
constexpr std::int64_t kRepeatSamples = kPropertySamples / 10;  // run twice: the same assignment
constexpr std::int64_t kDelayCap = 4096;
constexpr std::int64_t kOneStepChunk = 4096;  // kk balances one step (no cap) per chunk
constexpr int kManySteps = 1'000'000;          // until_placed stops long before

struct Samples {
  std::vector<std::int64_t> tokens;
  std::vector<double> time_s;
};

// Heavy-tailed lengths (u^3 x cap: a third of them outliers at cap / 4) and attention-like
// costs, time = t + t^2 / 1000.
Samples dataset(std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  Samples s;
  s.tokens.reserve(static_cast<std::size_t>(kPropertySamples));
  s.time_s.reserve(static_cast<std::size_t>(kPropertySamples));
  for (std::int64_t i = 0; i < kPropertySamples; ++i) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    const auto t = std::max<std::int64_t>(1, static_cast<std::int64_t>(u * u * u * static_cast<double>(kDelayCap)));
    s.tokens.push_back(t);
    s.time_s.push_back(static_cast<double>(t) + static_cast<double>(t) * static_cast<double>(t) / 1000.0);
  }
  return s;
}

Samples prefix(const Samples& s, std::int64_t n) {
  const auto end = static_cast<std::ptrdiff_t>(n);
  return {{s.tokens.begin(), s.tokens.begin() + end}, {s.time_s.begin(), s.time_s.begin() + end}};
}

Samples permuted(const Samples& s, std::uint64_t seed) {
  std::vector<std::int64_t> order(s.tokens.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::int64_t>(i);
  SeededRandom(seed).shuffle(std::span<std::int64_t>(order));
  Samples out;
  for (std::int64_t i : order) {
    out.tokens.push_back(s.tokens[static_cast<std::size_t>(i)]);
    out.time_s.push_back(s.time_s[static_cast<std::size_t>(i)]);
  }
  return out;
}

// Epoch e: 2 x 4 slots, then 4 x 1; the step budget cycles through full, a third and 5/8.
StreamSettings epoch_settings(BalanceMethod method, int epoch) {
  StreamSettings st;
  st.dp = epoch % 2 == 0 ? 2 : 4;
  st.microbatches = epoch % 2 == 0 ? 4 : 1;
  st.method = method;
  st.max_tokens = kDelayCap;
  st.steps = kManySteps / st.slots();
  st.until_placed = true;
  st.filler_s_per_token = 1.0;
  const std::int64_t full = kDelayCap * st.slots();
  st.step_budget_tokens = {full, full / 3, full * 5 / 8};
  return st;
}

// One epoch through the stream: placed exactly once, within the bound; returns the slot of each.
std::vector<std::int32_t> run_epoch(const Samples& s, BalanceMethod method, int epoch) {
  const StreamSettings st = epoch_settings(method, epoch);
  const StreamResult r = balance_stream(s.tokens, s.time_s, st);
  const auto problems = stream_violations(r, s.tokens, s.time_s, st);
  EXPECT_TRUE(problems.empty()) << to_string(method) << ", epoch " << epoch << ": " << problems.front();
  EXPECT_EQ(r.n_in, static_cast<std::int64_t>(s.tokens.size()));
  EXPECT_EQ(r.n_carried, 0) << "until_placed ends with nothing waiting";
  EXPECT_LE(r.max_delay_steps, delay_bound_steps(st));
  std::vector<std::int32_t> slot_of(s.tokens.size(), -1);
  for (const StepResult& step : r.steps)
    for (const SlotPlacement& p : step.placements) slot_of[static_cast<std::size_t>(p.item)] = p.slot;
  return slot_of;
}

// kk has no cap: one step per chunk, each placing the whole chunk.
std::vector<std::int32_t> run_kk_epoch(const Samples& s, int epoch) {
  StreamSettings st = epoch_settings(BalanceMethod::kk, epoch);
  st.max_tokens = 0;
  st.steps = 1;
  st.one_step = true;
  st.until_placed = false;
  st.step_budget_tokens.clear();
  std::vector<std::int32_t> slot_of;
  const auto n = static_cast<std::int64_t>(s.tokens.size());
  for (std::int64_t begin = 0; begin < n; begin += kOneStepChunk) {
    const auto size = static_cast<std::size_t>(std::min(kOneStepChunk, n - begin));
    const std::span<const std::int64_t> tokens(s.tokens.data() + begin, size);
    const std::span<const double> time(s.time_s.data() + begin, size);
    const StreamResult r = balance_stream(tokens, time, st);
    EXPECT_TRUE(stream_violations(r, tokens, time, st).empty());
    EXPECT_EQ(r.n_assigned, static_cast<std::int64_t>(size));
    for (const SlotPlacement& p : r.steps.front().placements) slot_of.push_back(p.slot);
  }
  return slot_of;
}

class DelayBoundAtScale : public ::testing::TestWithParam<BalanceMethod> {};

TEST_P(DelayBoundAtScale, EverySampleOncePerEpochWithinTheBoundAndTheSameForASeed) {
  const BalanceMethod method = GetParam();
  static const Samples data = dataset(13);
  auto run = [&](const Samples& order, int epoch) {
    return method == BalanceMethod::kk ? run_kk_epoch(order, epoch) : run_epoch(order, method, epoch);
  };
  for (int epoch = 0; epoch < kEpochs; ++epoch) {
    const Samples order = permuted(data, static_cast<std::uint64_t>(epoch));
    const auto slots = run(order, epoch);
    EXPECT_EQ(std::count(slots.begin(), slots.end(), -1), 0) << "epoch " << epoch;
  }
  // Same seed, same assignment: two fresh runs over the same permuted prefix.
  const Samples part = prefix(permuted(data, 0), kRepeatSamples);
  EXPECT_EQ(run(part, 0), run(part, 0));
}

INSTANTIATE_TEST_SUITE_P(Methods, DelayBoundAtScale,
                         ::testing::Values(BalanceMethod::none, BalanceMethod::fixed_greedy, BalanceMethod::lpt,
                                           BalanceMethod::kk, BalanceMethod::wlb),
                         [](const auto& info) {
                           std::string name = to_string(info.param);
                           std::erase(name, '-');
                           return name;
                         });

StreamSettings wlb_one_rank(int steps) {
  StreamSettings st;
  st.dp = 1;
  st.microbatches = 2;
  st.max_tokens = 40'000;
  st.steps = steps;
  st.method = BalanceMethod::wlb;
  st.filler_s_per_token = 1.0;
  return st;
}

TEST(DelayBound, ALoneSampleIsPlacedInItsOwnStep) {
  // Issue 13, S1: shedding a step's only sample carried it to the next step, step after step.
  for (std::size_t n : {1u, 3u}) {
    const std::vector<std::int64_t> tokens(n, 5000);
    const std::vector<double> time(n, 5000.0);
    const StreamResult r = balance_stream(tokens, time, wlb_one_rank(200));
    EXPECT_EQ(r.n_assigned, static_cast<std::int64_t>(n));
    EXPECT_EQ(r.n_carried, 0);
    EXPECT_EQ(r.max_delay_steps, 0) << "the input has ended: nothing to shed for";
  }
}

TEST(DelayBound, TheEndOfTheStreamFlushesTheQueues) {
  // A lone outlier (>= cap / 2) waited for three more to balance it: 32 empty micro-batches.
  const std::vector<std::int64_t> tokens = {20'000};
  const std::vector<double> time = {20'000.0};
  const StreamResult r = balance_stream(tokens, time, wlb_one_rank(1));
  EXPECT_EQ(r.n_assigned, 1);
  EXPECT_EQ(r.steps.front().released_outliers, 1);
}

TEST(DelayBound, AnAllOutlierStreamStaysWithinTheBound) {
  // Every sample an outlier: before, the first step drew all of them into the queues and one
  // group left per step, so the delay grew with the input.
  std::mt19937_64 rng(3);
  std::vector<std::int64_t> tokens;
  std::vector<double> time;
  for (int i = 0; i < 20'000; ++i) {
    tokens.push_back(10'000 + static_cast<std::int64_t>(rng() % 30'000));
    time.push_back(static_cast<double>(tokens.back()) * (1.0 + static_cast<double>(rng() % 100) / 10.0));
  }
  StreamSettings st = wlb_one_rank(kManySteps / 2);
  st.dp = 4;
  st.until_placed = true;
  const StreamResult r = balance_stream(tokens, time, st);
  ASSERT_TRUE(stream_violations(r, tokens, time, st).empty()) << stream_violations(r, tokens, time, st).front();
  EXPECT_EQ(r.n_carried, 0);
  EXPECT_LE(r.max_delay_steps, delay_bound_steps(st));
  EXPECT_EQ(delay_bound_steps(st), kDefaultMaxWaitSteps + kQueuedSamplesPerSlot + kCarriedPerSlot - 1);
}

TEST(DelayBound, TheBoundIsOneStepWithoutQueues) {
  StreamSettings st = wlb_one_rank(10);
  for (BalanceMethod m : {BalanceMethod::none, BalanceMethod::fixed_greedy, BalanceMethod::lpt}) {
    st.method = m;
    EXPECT_EQ(delay_bound_steps(st), 1);
  }
  st.one_step = true;
  st.steps = 1;
  EXPECT_EQ(delay_bound_steps(st), 0);
}

TEST(DelayBound, LimitsThatBoundTheWorkNameTheirField) {
  using testing::thrown_field;
  StreamSettings st = wlb_one_rank(10);
  st.max_tokens = kMaxSlotTokens + 1;
  EXPECT_EQ(thrown_field([&] { st.validate(); }), "max-tokens");
  st = wlb_one_rank(static_cast<int>(kMaxSlotSteps / 2 + 1));
  EXPECT_EQ(thrown_field([&] { st.validate(); }), "steps") << "slots x steps over the limit";
  st = wlb_one_rank(10);
  st.count = CountMode::equal;
  EXPECT_EQ(thrown_field([&] { st.validate(); }), "equal_count");
  st = wlb_one_rank(10);
  st.step_budget_tokens = {0};
  EXPECT_EQ(thrown_field([&] { st.validate(); }), "step_budget_tokens");
  st.step_budget_tokens = {st.max_tokens * st.slots() + 1};
  EXPECT_EQ(thrown_field([&] { st.validate(); }), "step_budget_tokens");
}

TEST(DelayBound, AMillionSlotsIsFast) {
  // dp 1000 x 1000 micro-batches, three steps: the work is in samples x log(slots) plus slots per
  // step (the room tree, one pass of shedding), not slots squared.
  StreamSettings st;
  st.dp = 1000;
  st.microbatches = 1000;
  st.max_tokens = 4096;
  st.steps = 3;
  st.method = BalanceMethod::wlb;
  st.filler_s_per_token = 1.0;
  std::mt19937_64 rng(5);
  std::vector<std::int64_t> tokens;
  std::vector<double> time;
  for (int i = 0; i < 50'000; ++i) {
    tokens.push_back(1 + static_cast<std::int64_t>(rng() % 4096));
    time.push_back(static_cast<double>(tokens.back()));
  }
  const StreamResult r = balance_stream(tokens, time, st);
  EXPECT_TRUE(stream_violations(r, tokens, time, st).empty());
  EXPECT_EQ(r.n_assigned + r.n_carried, r.n_in);
}

}  // namespace
}  // namespace tessera
