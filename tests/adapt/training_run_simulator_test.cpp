// The run simulator's policies on every built-in scenario of the three configurations of issue 7:
// coadaptive is never more than 1% slower than another policy, within 3% of the offline optimum,
// and 3% or more faster than fixed on at least one scenario; the optimum bounds every policy; the
// online controller's decisions do not depend on the future.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>

#include "adapt/batch_grid.h"
#include "adapt/gain_accounting.h"
#include "adapt/training_run_simulator.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"

namespace tessera {
namespace {

constexpr double kNeverSlowerThan = 1.01;  // than any other policy
constexpr double kNearOptimum = 1.03;
constexpr double kGainOverFixed = 0.97;
// Policies advance in 100-step windows at the noise scale of each window's middle and with step
// jitter; the optimum integrates exactly over <= 0.2% segments. They agree to ~0.01%.
constexpr double kOptimumTolerance = 1.001;

struct Outcome {
  std::string scenario;
  double coadaptive_over_fixed = 0;
};

// Runs every built-in scenario of `names` (same seq_len and bounds) on one configuration, sharing
// the planner's candidates. hundred_step: every window is the 100-step one (within the work bound).
std::vector<Outcome> check_every_scenario(const char* model_name, const char* cluster_name,
                                          const std::vector<std::string>& names = builtin_scenario_names(),
                                          bool hundred_step = true) {
  const ModelSpec model = builtin_model(model_name);
  const Cluster cluster = load_cluster(cluster_name);
  const NoiseScaleScenario first = builtin_scenario(names.front(), model);
  const CandidateSet candidates =
      build_candidates(model, cluster, first.seq_len, batch_grid(first.min_batch, first.max_batch));
  std::vector<Outcome> outcomes;
  for (const std::string& name : names) {
    const NoiseScaleScenario s = builtin_scenario(name, model);
    EXPECT_EQ(s.seq_len, first.seq_len);
    EXPECT_EQ(s.min_batch, first.min_batch);
    EXPECT_EQ(s.max_batch, first.max_batch);
    const RunSimulation sim = simulate_training_run(make_training_run_world(model, cluster, s, candidates));
    const double coadaptive = sim.of(Policy::coadaptive).time_to_target_s;
    const double optimum = sim.offline_optimum.time_to_target_s;
    const std::string where = std::string(model_name) + " on " + cluster_name + ", " + name;
    for (Policy p : kPolicies) {
      const double t = sim.of(p).time_to_target_s;
      // Within the work bound at the 100-step cadence: the answers are the per-100-step ones.
      if (hundred_step) {
        EXPECT_EQ(sim.of(p).long_windows, 0) << where << ": " << to_string(p);
      }
      EXPECT_LE(coadaptive, kNeverSlowerThan * t) << where << ": coadaptive vs " << to_string(p);
      EXPECT_LE(optimum, kOptimumTolerance * t) << where << ": optimum vs " << to_string(p);
    }
    EXPECT_LE(coadaptive, kNearOptimum * optimum) << where;
    EXPECT_LE(optimum, kOptimumTolerance * sim.hindsight_static_time_s) << where;
    outcomes.push_back({name, coadaptive / sim.of(Policy::fixed).time_to_target_s});
    ::testing::Test::RecordProperty(name + "_coadaptive_vs_fixed_pct", std::to_string(100.0 * (outcomes.back().coadaptive_over_fixed - 1.0)));
    ::testing::Test::RecordProperty(name + "_coadaptive_vs_optimum_pct", std::to_string(100.0 * (coadaptive / optimum - 1.0)));
  }
  return outcomes;
}

TEST(TrainingRunSimulator, Llama3_8bOn32H100) {
  const auto outcomes = check_every_scenario("llama3-8b", "h100-sxm-80gb:32");
  const auto best = std::min_element(outcomes.begin(), outcomes.end(), [](const Outcome& a, const Outcome& b) {
    return a.coadaptive_over_fixed < b.coadaptive_over_fixed;
  });
  EXPECT_LE(best->coadaptive_over_fixed, kGainOverFixed) << best->scenario;
}

// Issue 15: on every large-cluster scenario, coadaptive is within 1% of the best other policy and
// 3% of the offline optimum, where co-adaptation pays most (the map's 70B and 405B cells).
TEST(TrainingRunSimulator, EveryLargeClusterScenarioStaysNearTheBest) {
#ifdef TESSERA_SANITIZED
  GTEST_SKIP() << "planner searches on 4,096 and 8,192 GPUs per grid batch: Release only";
#endif
  // Runs of 1e12+ tokens on thousands of GPUs: some windows are longer than 100 steps (work bound).
  check_every_scenario("llama3-70b", "h100-sxm-80gb:4096", large_cluster_scenario_names(), false);
  check_every_scenario("llama3.1-405b", "h100-sxm-80gb:8192", large_cluster_scenario_names(), false);
}

TEST(TrainingRunSimulator, Qwen25_32bOn32H100) { check_every_scenario("qwen2.5-32b", "h100-sxm-80gb:32"); }

TEST(TrainingRunSimulator, Qwen25_32bOn32Mi210) { check_every_scenario("qwen2.5-32b", "mi210:32"); }

// Two runs whose noise scale agrees for the first half of the progress and differs (10x) after:
// the coadaptive policy makes the same decisions until the change reaches its measurements.
TEST(TrainingRunSimulator, TheControllerDoesNotSeeTheFuture) {
  const ModelSpec model = builtin_model("llama3-8b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:32");
  const NoiseScaleScenario same = builtin_scenario("zero3-slower", model);
  NoiseScaleScenario changed = same;
  const double half = 0.5 * same.token_budget;
  for (NoiseScalePoint& p : changed.noise_scale)
    if (p.tokens > half) p.noise_scale_tokens *= 10.0;
  const TrainingRunWorld world = make_training_run_world(model, cluster, same);
  // Built again, so its progress tables (training_run_world.h) follow the changed noise scale too.
  const TrainingRunWorld world_changed = make_training_run_world(model, cluster, changed, world.candidates);
  const std::size_t fixed = best_static_candidate(world, StepTimes::predicted);
  const PolicyRun a = simulate_policy(world, Policy::coadaptive, fixed);
  const PolicyRun b = simulate_policy(world_changed, Policy::coadaptive, fixed);
  ASSERT_GT(a.segments.size(), 1u);  // it made decisions in the first half
  // Tokens consumed by the time progress reached a quarter of the budget: far before the change.
  const double early = 0.2 * a.consumed_tokens;
  std::size_t compared = 0;
  for (std::size_t i = 0; i < a.segments.size() && a.segments[i].start_tokens < early; ++i, ++compared) {
    ASSERT_LT(i, b.segments.size());
    EXPECT_EQ(a.segments[i].candidate, b.segments[i].candidate);
    EXPECT_EQ(a.segments[i].start_tokens, b.segments[i].start_tokens);
  }
  EXPECT_GE(compared, 2u);
  EXPECT_NE(a.time_to_target_s, b.time_to_target_s);  // the future does change the outcome
  // And a run is reproducible.
  EXPECT_EQ(simulate_policy(world, Policy::coadaptive, fixed).time_to_target_s, a.time_to_target_s);
}

// Step times as noisy as a scenario may make them (50% per step) never stop a run: every policy
// reaches the target, and the controller still lands near the optimum.
TEST(TrainingRunSimulator, VeryNoisyStepTimesStillFinish) {
  const ModelSpec model = builtin_model("llama3-8b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:32");
  NoiseScaleScenario s = builtin_scenario("warmup", model);
  s.max_batch = 128;
  s.step_time_jitter = 0.5;
  const RunSimulation sim = simulate_training_run(model, cluster, s);
  for (Policy p : kPolicies) {
    EXPECT_GT(sim.of(p).time_to_target_s, 0.0);
    EXPECT_GE(sim.of(p).consumed_tokens, s.token_budget * 0.5);
  }
  EXPECT_LE(sim.of(Policy::coadaptive).time_to_target_s, kNearOptimum * sim.offline_optimum.time_to_target_s);
}

// llama3-8b on 32 H100 with batches 16 to 64 (the planner runs for three grid batches only), for
// the bounded-work checks below.
struct SmallWorld {
  ModelSpec model = builtin_model("llama3-8b");
  Cluster cluster = load_cluster("h100-sxm-80gb:32");
  NoiseScaleScenario scenario;
  CandidateSet candidates;
};

const SmallWorld& small_world() {
  static const SmallWorld w = [] {
    SmallWorld s;
    s.scenario = builtin_scenario("pretrain", s.model);
    s.scenario.max_batch = 64;
    s.candidates = build_candidates(s.model, s.cluster, s.scenario.seq_len,
                                    batch_grid(s.scenario.min_batch, s.scenario.max_batch));
    return s;
  }();
  return w;
}

TrainingRunWorld world_with_budget(double token_budget) {
  const SmallWorld& w = small_world();
  NoiseScaleScenario s = w.scenario;
  s.token_budget = token_budget;
  return make_training_run_world(w.model, w.cluster, s, w.candidates);
}

// Issue 13: token_budget 1e15 ran past 20 s, linear in the budget. Now a policy runs at most
// about max_windows windows whatever the budget (1e16 is the scenario limit; the test passes
// 5,000 to stay quick, the CLI test runs the default), and the answer is still right: fixed
// matches the closed form (its candidate's tokens to the target at its real step time: the
// jitter averages out), the optimum bounds every policy, coadaptive lands near it, and the
// optimum's grid is its fixed number of segments.
TEST(TrainingRunSimulator, HugeBudgetsRunInBoundedWindows) {
  constexpr std::int64_t kWindows = 5000;
  for (std::size_t n : {std::size_t{1}, std::size_t{171}, std::size_t{3267}})
    EXPECT_LE(max_decision_windows(n) * static_cast<std::int64_t>(n + kWindowOverheadEvaluations), kMaxPolicyEvaluations);
  for (double budget : {1e15, 1e16}) {
    const TrainingRunWorld world = world_with_budget(budget);
    const std::size_t fixed = best_static_candidate(world, StepTimes::predicted);
    const PolicyRun optimum = offline_optimum(world);
    EXPECT_LE(optimum.windows, kOptimumSegments);
    for (Policy p : {Policy::fixed, Policy::coadaptive}) {
      const PolicyRun run = simulate_policy(world, p, fixed, kDecisionIntervalSteps, kWindows);
      // The window count is bounded (a few percent over the nominal: the noise scale moves within a window).
      EXPECT_LE(run.windows, kWindows * 11 / 10) << to_string(p) << " " << budget;
      EXPECT_GT(run.long_windows, 0) << to_string(p);
      EXPECT_LE(optimum.time_to_target_s, kOptimumTolerance * run.time_to_target_s) << to_string(p);
      EXPECT_LE(run.time_to_target_s, kNearOptimum * optimum.time_to_target_s) << to_string(p);
      if (p == Policy::fixed) {
        EXPECT_NEAR(run.time_to_target_s / static_time_to_target_s(world, fixed, StepTimes::real), 1.0, 1e-3);
      }
    }
  }
}

// Longer windows change the answers little: on the pretrain scenario, policies deciding every
// 1/400 of the progress (instead of every 100 steps, ~35,000 windows at batch 16) agree with the
// per-100-step ones within 0.5%, and the per-100-step run is the one an unbounded window count
// gives (the old behaviour).
TEST(TrainingRunSimulator, LongerWindowsAgreeWithTheHundredStepCadence) {
  const TrainingRunWorld world = world_with_budget(small_world().scenario.token_budget);
  const std::size_t fixed = best_static_candidate(world, StepTimes::predicted);
  for (Policy p : {Policy::fixed, Policy::batch_only}) {
    const PolicyRun exact = simulate_policy(world, p, fixed, kDecisionIntervalSteps, INT64_MAX);
    EXPECT_EQ(exact.long_windows, 0);
    const PolicyRun coarse = simulate_policy(world, p, fixed, kDecisionIntervalSteps, 400);
    EXPECT_GT(coarse.long_windows, 0);
    EXPECT_LT(coarse.windows, exact.windows);
    EXPECT_NEAR(coarse.time_to_target_s / exact.time_to_target_s, 1.0, 5e-3) << to_string(p);
    EXPECT_NEAR(coarse.consumed_tokens / exact.consumed_tokens, 1.0, 5e-3) << to_string(p);
  }
}

}  // namespace
}  // namespace tessera

namespace tessera {
namespace {

// Issue 15: on a large cluster, the published-trajectory scenario where the critical batch rises
// (cbs-pretrain, the default from 512 GPUs) lets coadaptive beat fixed by >= 3% with batch and
// plan changing together; it stays within 3% of the optimum, which bounds every policy; the gain's
// parts sum to the total; change counts agree with the segments.
TEST(TrainingRunSimulator, LargeClusterCoadaptationPays) {
#ifdef TESSERA_SANITIZED
  GTEST_SKIP() << "a 4,096-GPU planner search per grid batch: Release only";
#endif
  const ModelSpec model = builtin_model("llama3-70b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:4096");
  EXPECT_STREQ(default_scenario_name(cluster.gpus()), "cbs-pretrain");
  EXPECT_STREQ(default_scenario_name(511), "pretrain");
  const RunSimulation sim = simulate_training_run(model, cluster, builtin_scenario("cbs-pretrain", model));
  const double fixed = sim.of(Policy::fixed).time_to_target_s;
  const PolicyRun& co = sim.of(Policy::coadaptive);
  EXPECT_LE(co.time_to_target_s, kGainOverFixed * fixed);
  EXPECT_LE(co.time_to_target_s, kNearOptimum * sim.offline_optimum.time_to_target_s);
  EXPECT_GT(co.plan_changes, 0);
  EXPECT_GT(co.batch_changes, 0);
  // The JSON's split sums to the total. Adapting the batch on fixed's plan gains nothing here
  // (from_batch >= 0, no loss): the gain needs the plan to change with the batch (from_plan).
  const GainAccounting gain = gain_accounting(sim);
  EXPECT_NEAR(gain.from_batch_s + gain.from_plan_s, gain.total_s, 1e-9 * fixed);
  EXPECT_GE(gain.from_batch_s, 0.0);
  EXPECT_GT(gain.from_plan_s, 0.0);
  EXPECT_LE(gain.total_s, gain.optimum_s * (1.0 + 1e-9));
  for (Policy p : kPolicies) {
    const PolicyRun& run = sim.of(p);
    EXPECT_LE(co.time_to_target_s, kNeverSlowerThan * run.time_to_target_s) << to_string(p);
    // Exact accounting: the optimum bounds every policy to rounding.
    EXPECT_LE(sim.offline_optimum.time_to_target_s, (1.0 + 1e-9) * run.time_to_target_s) << to_string(p);
    std::int64_t batch = 0, plan = 0;
    for (std::size_t i = 1; i < run.segments.size(); ++i) {
      const Candidate& a = sim.world.candidates.candidates[run.segments[i - 1].candidate];
      const Candidate& b = sim.world.candidates.candidates[run.segments[i].candidate];
      batch += a.global_batch != b.global_batch;
      plan += a.plan_index != b.plan_index;
    }
    EXPECT_EQ(batch, run.batch_changes) << to_string(p);
    EXPECT_EQ(plan, run.plan_changes) << to_string(p);
  }
}

}  // namespace
}  // namespace tessera
