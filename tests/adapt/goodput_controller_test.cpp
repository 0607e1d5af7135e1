// The online controller on a small synthetic candidate set whose goodput can be worked out by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "adapt/goodput_controller.h"
#include "adapt/simulated_gradient_norms.h"
#include "calibrate/measurement.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "core/error.h"

namespace tessera {
namespace {

constexpr std::int64_t kSeq = 1000;
constexpr double kRestartS = 100.0;
const std::int64_t kBatches[] = {16, 32, 64, 128, 256};

// Plan 0 (tp=1, dp=8) and plan 1 (tp=2, dp=4, another family) at every batch; step time
// 0.1 s + 0.01 s per sequence, plan 1 `plan1_factor` times that.
CandidateSet synthetic_candidates(double plan1_factor = 1.05) {
  CandidateSet set;
  set.seq_len = kSeq;
  Plan p0;
  p0.dp = 8;
  Plan p1 = p0;
  p1.tp = 2;
  p1.dp = 4;
  set.plans = {p0, p1};
  for (std::int64_t b : kBatches) {
    set.batches.push_back(b);
    set.planner_best.push_back(set.candidates.size());
    const double t = 0.1 + 0.01 * static_cast<double>(b);
    set.candidates.push_back(Candidate{b, 0, t});
    set.candidates.push_back(Candidate{b, 1, t * plan1_factor});
  }
  return set;
}

std::size_t index_of(const CandidateSet& set, std::int64_t batch, std::size_t plan) {
  for (std::size_t i = 0; i < set.candidates.size(); ++i)
    if (set.candidates[i].global_batch == batch && set.candidates[i].plan_index == plan) return i;
  return set.candidates.size();
}

ControllerOptions options(double budget = 1e13) {
  ControllerOptions o;
  o.token_budget = budget;
  o.reference_batch = 16;
  return o;
}

// Steps on the current candidate at its predicted time x `slowdown`, with the exact expected
// norms of a noise scale (|G|^2 = 1, micro-batches of 1). Norms first, so the progress of these
// steps is counted at the noise scale they measured.
void run_steps(GoodputController& c, std::int64_t steps, double noise_scale, double slowdown = 1.0) {
  const Candidate& now = c.current_candidate();
  const double b = static_cast<double>(now.global_batch);
  c.observe_gradients(1.0 + noise_scale, 1.0, 1.0 + noise_scale / b, b, steps);
  c.observe_step(now.predicted_step_time_s * slowdown, steps);
}

// The batch follows the measured noise scale: small while it is small (goodput falls with the
// batch), the goodput-best batch, 128 here, once it is large. A batch-only change, so immediate.
TEST(GoodputController, BatchFollowsTheMeasuredNoiseScale) {
  const CandidateSet set = synthetic_candidates();
  GoodputController c(set, ReconfigurationCost{0.0, kRestartS, 0.0}, options());
  c.switch_to(index_of(set, 16, 0));
  run_steps(c, 2000, 8.0);
  EXPECT_FALSE(c.decide().switch_now);
  EXPECT_NEAR(c.noise_scale(), 8.0, 1e-6);
  run_steps(c, 20000, 2000.0);
  const ControllerDecision d = c.decide();
  ASSERT_TRUE(d.switch_now);
  EXPECT_EQ(set.candidates[d.candidate].global_batch, 128);
  EXPECT_EQ(set.candidates[d.candidate].plan_index, 0u);
  EXPECT_EQ(d.switch_cost_s, 0.0);
  EXPECT_GT(d.candidate_goodput, d.current_goodput);
  c.switch_to(d.candidate);
  EXPECT_EQ(c.history().size(), 2u);
  EXPECT_EQ(c.history()[1].consumed_tokens, c.consumed_tokens());
  EXPECT_FALSE(c.decide().switch_now);  // settled
  // 22,000 steps of 16 sequences of 1,000 tokens, then 128.
  EXPECT_EQ(megatron_batch_schedule(c.batch_schedule()), "0:16 352M:128");
}

TEST(GoodputController, UsesTheInitialGuessUntilEnoughStepsAreMeasured) {
  const CandidateSet set = synthetic_candidates();
  ControllerOptions o = options();
  o.initial_noise_scale = 500.0;
  GoodputController c(set, ReconfigurationCost{0.0, kRestartS, 0.0}, o);
  EXPECT_EQ(c.noise_scale(), 500.0);
  // The start: the best predicted goodput at the guess, B / ((0.1 + 0.01 B)(500 + B)) peaking at
  // B = 64 on the grid, on the faster plan.
  EXPECT_EQ(c.current_candidate().global_batch, 64);
  EXPECT_EQ(c.current_candidate().plan_index, 0u);
  run_steps(c, kMinNoiseScaleSteps - 1, 20.0);
  EXPECT_EQ(c.noise_scale(), 500.0);
  run_steps(c, 1, 20.0);
  EXPECT_NEAR(c.noise_scale(), 20.0, 1e-6);
}

// At B_noise = 640 the goodput-best batch is 64 (1.7% ahead of 128), so only plans move below.
constexpr double kNoise = 640.0;

// Plan 0 runs 30% slower than predicted; plan 1 (another family, predicted 5% slower) is not
// measured, so the cost model stands for it. The restart pays only once the horizon (the progress
// made so far) is long enough.
TEST(GoodputController, RefitMovesOffAFamilyThatRunsSlowerOnceTheRestartPays) {
  const CandidateSet set = synthetic_candidates();
  GoodputController c(set, ReconfigurationCost{0.0, kRestartS, 0.0}, options());
  c.switch_to(index_of(set, 64, 0));
  run_steps(c, 200, kNoise, 1.3);
  EXPECT_NEAR(c.refit().scale(family_of(set.plans[0])), 1.3, 1e-9);
  ControllerDecision d = c.decide();
  EXPECT_FALSE(d.switch_now) << "200 steps of progress cannot pay a " << kRestartS << " s restart";
  EXPECT_GT(d.horizon_tokens, 0.0);
  run_steps(c, 5000, kNoise, 1.3);
  d = c.decide();
  ASSERT_TRUE(d.switch_now);
  EXPECT_EQ(set.candidates[d.candidate].plan_index, 1u);
  EXPECT_EQ(d.switch_cost_s, kRestartS);
  EXPECT_GT(d.predicted_saving_s, 0.0);
  c.switch_to(d.candidate);
  run_steps(c, 1000, kNoise, 1.05);  // plan 1 runs as predicted
  EXPECT_FALSE(c.decide().switch_now);  // plan 0 is still known to be slow
}

// A plan 0.5% faster than the current one is within the plan hysteresis: no restart for it.
TEST(GoodputController, HysteresisKeepsNoiseFromTradingRestarts) {
  const CandidateSet set = synthetic_candidates(0.995);
  GoodputController c(set, ReconfigurationCost{0.0, kRestartS, 0.0}, options());
  c.switch_to(index_of(set, 64, 0));
  run_steps(c, 100000, kNoise);
  const ControllerDecision d = c.decide();
  EXPECT_FALSE(d.switch_now);
}

// Issue 15: no restart to switch between two plans predicted equally fast. With no hysteresis and a
// cheap restart, a plan 0.05% faster (within the planner's tie tolerance, kTimeTieFraction) is not
// switched to, however long the horizon; one 1% faster is, so the tie rule is what holds it back.
TEST(GoodputController, NoRestartBetweenPlansPredictedEquallyFast) {
  ControllerOptions o = options();
  o.plan_hysteresis = 0.0;
  o.batch_hysteresis = 0.0;
  constexpr double kCheapRestartS = 1.0;
  for (const double plan1_factor : {1.0 - 0.5 * kTimeTieFraction, 0.99}) {
    const CandidateSet set = synthetic_candidates(plan1_factor);
    GoodputController c(set, ReconfigurationCost{0.0, kCheapRestartS, 0.0}, o);
    c.switch_to(index_of(set, 64, 0));
    run_steps(c, 1'000'000, kNoise);
    const ControllerDecision d = c.decide();
    const bool plan_change = d.switch_now && set.candidates[d.candidate].plan_index == 1u;
    EXPECT_EQ(plan_change, plan1_factor < 1.0 - kTimeTieFraction) << plan1_factor;
  }
}

// Near the end of the budget the horizon shrinks to what is left: nothing is worth a restart.
TEST(GoodputController, NoRestartWhenTheRunIsAlmostOver) {
  const CandidateSet set = synthetic_candidates();
  const double budget = 1e8;
  GoodputController c(set, ReconfigurationCost{0.0, kRestartS, 0.0}, options(budget));
  c.switch_to(index_of(set, 64, 0));
  run_steps(c, 1550, kNoise, 1.3);  // 99M tokens consumed, 92.5M of progress
  const ControllerDecision d = c.decide();
  EXPECT_LT(d.horizon_tokens, 0.1 * budget);
  EXPECT_FALSE(d.switch_now && set.candidates[d.candidate].plan_index == 1u);
}

// The noise scale it measures from sampled norms converges to the truth.
TEST(GoodputController, MeasuresTheNoiseScaleFromSampledNorms) {
  const CandidateSet set = synthetic_candidates();
  GoodputController c(set, ReconfigurationCost{0.0, kRestartS, 0.0}, options());
  c.switch_to(index_of(set, 64, 0));
  std::mt19937_64 rng(4);
  for (int window = 0; window < 100; ++window) {
    const MeasuredSquaredNorms n = sample_squared_norms(rng, 1.0, 300.0, 1000.0, 4, 64, 100);
    c.observe_gradients(n.small_sq_norm, 4.0, n.big_sq_norm, 64.0, 100);
  }
  EXPECT_NEAR(c.noise_scale() / 300.0, 1.0, 0.1);
}

TEST(GoodputController, AllowedCandidatesRestrictIt) {
  const CandidateSet set = synthetic_candidates();
  const std::vector<std::size_t> only_plan_1 = {index_of(set, 16, 1), index_of(set, 256, 1)};
  GoodputController c(set, ReconfigurationCost{0.0, kRestartS, 0.0}, options(), only_plan_1);
  EXPECT_EQ(c.current_candidate().plan_index, 1u);
  EXPECT_THROW(c.switch_to(index_of(set, 16, 0)), Error);
  EXPECT_THROW(GoodputController(set, ReconfigurationCost{}, options(), {99}), Error);
  ControllerOptions bad = options();
  bad.token_budget = 0;
  EXPECT_THROW(GoodputController(set, ReconfigurationCost{}, bad), Error);
}

// --- The cost-model refit (candidates priced on a model and a cluster) ---

// gpt3-1.7b on one A100 node at two batches: a few plan families, built once (the planner runs).
const CandidateSet& priced_candidates() {
  static const CandidateSet set =
      build_candidates(builtin_model("gpt3-1.7b"), load_cluster("a100-sxm-80gb:8"), 2048, std::vector<std::int64_t>{32, 64});
  return set;
}

// Its step time on a cluster of `truth` GPUs, times `slowdown` for plans of `slow_family`.
double true_step_time_s(const CandidateSet& set, std::size_t i, const GpuSpec& truth,
                        const PlanFamily* slow_family = nullptr, double slowdown = 1.0) {
  const Candidate& c = set.candidates[i];
  const double t = predict_iteration_time_s(set.run_of(c), truth);
  return slow_family && family_of(set.plan(c)) == *slow_family ? t * slowdown : t;
}

std::size_t first_of_other_family(const CandidateSet& set, const PlanFamily& family) {
  for (std::size_t i = 0; i < set.candidates.size(); ++i)
    if (family_of(set.plan(set.candidates[i])) != family) return i;
  return set.candidates.size();
}

// A cluster whose GEMMs run at 0.85 of the catalog's rate: after ONE family is measured, the
// GPU refitted without a prior prices every family never run within 2% of its true time (the
// catalog prices them off by more than 5%), because the refit moved the GPU, not a per-family
// ratio. With calibrate's prior (the default) the fit moves part of the way: closer, not there.
TEST(GoodputControllerRefit, OneFamilyMeasuredPricesTheFamiliesNeverRun) {
  const CandidateSet& set = priced_candidates();
  GpuSpec truth = set.pricing->gpu;
  truth.gemm_efficiency *= 0.85;
  GoodputController with_prior(set, ReconfigurationCost{}, options());
  ControllerOptions trusting = options();
  trusting.refit_prior_sigma = 0.0;
  GoodputController c(set, ReconfigurationCost{}, trusting);
  ASSERT_TRUE(c.refits_cost_model());
  const std::size_t run = c.current();
  const PlanFamily run_family = family_of(set.plan(set.candidates[run]));
  c.observe_step(true_step_time_s(set, run, truth), 100);
  with_prior.observe_step(true_step_time_s(set, run, truth), 100);
  EXPECT_EQ(c.refit_count(), 1);
  ASSERT_NE(c.refit_profile(), nullptr);
  EXPECT_LT(c.priced_gpu()->gemm_efficiency, set.pricing->gpu.gemm_efficiency);
  EXPECT_NEAR(c.predicted_step_time_s(run) / true_step_time_s(set, run, truth), 1.0, 1e-9);  // its residual
  std::size_t never_run = 0;
  for (std::size_t i = 0; i < set.candidates.size(); ++i) {
    if (family_of(set.plan(set.candidates[i])) == run_family) continue;
    ++never_run;
    const double truth_s = true_step_time_s(set, i, truth);
    EXPECT_GT(truth_s / set.candidates[i].predicted_step_time_s, 1.05) << "the catalog is off for candidate " << i;
    EXPECT_NEAR(c.predicted_step_time_s(i) / truth_s, 1.0, 0.02) << "candidate " << i;
    EXPECT_GT(with_prior.predicted_step_time_s(i), set.candidates[i].predicted_step_time_s) << "candidate " << i;
    EXPECT_LT(with_prior.predicted_step_time_s(i), truth_s) << "candidate " << i;
    EXPECT_EQ(c.refit().scale(family_of(set.plan(set.candidates[i]))), 1.0);  // no residual of its own
  }
  EXPECT_GT(never_run, 0u);
}

// Only one family runs 20% slower than the cost model says (the ZeRO-3 misprediction kind): no
// GPU parameter explains that, and the residual on top of the refit carries it. Once both
// families are measured, each is predicted at exactly its measured time, and the slow one loses.
// The controller starts on a family that runs 20% slower than the model says; `other` is the first
// candidate of another family; both true step times on the catalog GPU.
struct SlowFamilyStart {
  const CandidateSet& set = priced_candidates();
  GoodputController c{set, ReconfigurationCost{}, options()};
  std::size_t slow = c.current();
  PlanFamily slow_family = family_of(set.plan(set.candidates[slow]));
  std::size_t other = first_of_other_family(set, slow_family);
  double slow_s = true_step_time_s(set, slow, set.pricing->gpu, &slow_family, 1.2);
  double other_s = other < set.candidates.size() ? true_step_time_s(set, other, set.pricing->gpu, &slow_family, 1.2) : 0.0;
};

TEST(GoodputControllerRefit, AFamilySpecificSlowdownIsCorrectedByTheResidual) {
  SlowFamilyStart run;
  auto& [set, c, slow, slow_family, other, slow_s, other_s] = run;
  ASSERT_LT(other, set.candidates.size());
  c.observe_step(slow_s, 200);
  c.switch_to(other);
  c.observe_step(other_s, 200);
  EXPECT_EQ(c.refit_count(), 2);
  EXPECT_NEAR(c.predicted_step_time_s(slow) / slow_s, 1.0, 1e-9);
  EXPECT_NEAR(c.predicted_step_time_s(other) / other_s, 1.0, 1e-9);
  // The refit alone (no residual) cannot price both: their ratio is not the model's.
  const double model_ratio = c.model_step_time_s(slow) / c.model_step_time_s(other);
  EXPECT_GT((slow_s / other_s) / model_ratio, 1.05);
}

// One family measured 20% slower than the model says: the refit reprices every family, and a
// family never run is priced for decisions at the better of two readings -- its refitted price,
// or its catalog price -- each scaled by what the run plan measured against it when that plan
// shards the optimizer the same way. A family of another sharding is priced at its catalog time
// (the better reading, since the refit raised every price); one of the same sharding takes the run
// plan's measured ratio. Once a family has run it is priced as measured.
TEST(GoodputControllerRefit, AFamilyNeverRunIsPricedAtTheBetterReadingUntilItRuns) {
  SlowFamilyStart run;
  auto& [set, c, slow, slow_family, other, slow_s, other_s] = run;
  ASSERT_LT(other, set.candidates.size());
  c.observe_step(slow_s, 200);
  EXPECT_EQ(c.decision_step_time_s(slow), c.predicted_step_time_s(slow));
  const double vs_refit = slow_s / c.model_step_time_s(slow);
  const double vs_catalog = slow_s / set.candidates[slow].predicted_step_time_s;
  EXPECT_GT(vs_catalog, 1.15);
  std::size_t same_sharding = 0, other_sharding = 0;
  for (std::size_t i = 0; i < set.candidates.size(); ++i) {
    const PlanFamily family = family_of(set.plan(set.candidates[i]));
    if (family == slow_family) continue;
    ++(family.zero == slow_family.zero ? same_sharding : other_sharding);
    const double catalog_s = set.candidates[i].predicted_step_time_s;
    EXPECT_GT(c.predicted_step_time_s(i), catalog_s) << "the refit raised every price, candidate " << i;
    if (family.zero == slow_family.zero) {
      EXPECT_NEAR(c.decision_step_time_s(i),
                  std::min(c.predicted_step_time_s(i) * vs_refit, catalog_s * vs_catalog), 1e-12 * catalog_s)
          << "candidate " << i;
      EXPECT_GT(c.decision_step_time_s(i), catalog_s) << "candidate " << i;
    } else {
      EXPECT_EQ(c.decision_step_time_s(i), catalog_s) << "candidate " << i;
    }
  }
  EXPECT_GT(same_sharding, 0u);
  EXPECT_GT(other_sharding, 0u);
  c.switch_to(other);
  c.observe_step(other_s, 200);
  EXPECT_EQ(c.decision_step_time_s(other), c.predicted_step_time_s(other));
  EXPECT_NEAR(c.decision_step_time_s(other) / other_s, 1.0, 1e-9);
}

// Refits run only on new information: a (plan, batch) not run before, or a mean that moved by
// more than refit_mean_move; the same or nearly the same times again refit nothing.
TEST(GoodputControllerRefit, RefitsOnlyOnNewInformation) {
  const CandidateSet& set = priced_candidates();
  ControllerOptions o = options();
  o.refit_mean_move = 0.01;
  GoodputController c(set, ReconfigurationCost{}, o);
  const double t = set.candidates[c.current()].predicted_step_time_s * 1.1;
  EXPECT_EQ(c.refit_count(), 0);
  c.observe_step(t, 100);
  EXPECT_EQ(c.refit_count(), 1);
  for (int i = 0; i < 20; ++i) c.observe_step(t, 100);
  c.observe_step(t * 1.05, 100);  // the mean of 2200 steps moves by 0.23%
  EXPECT_EQ(c.refit_count(), 1);
  c.observe_step(t * 1.5, 1100);  // by 16.7%
  EXPECT_EQ(c.refit_count(), 2);
  ASSERT_EQ(c.observed().size(), 1u);
  EXPECT_EQ(c.observed()[0].steps, 3300);
  EXPECT_NEAR(c.observed()[0].mean_step_time_s, t * (2100 + 1.05 * 100 + 1.5 * 1100) / 3300.0, 1e-12);
  const std::size_t other = first_of_other_family(set, family_of(set.plan(c.current_candidate())));
  c.switch_to(other);
  c.observe_step(t, 1);
  EXPECT_EQ(c.refit_count(), 3);
  c.switch_to(c.observed()[0].candidate);  // back: known, same times
  c.observe_step(t, 1);
  EXPECT_EQ(c.refit_count(), 3);
  ControllerOptions bad = options();
  bad.refit_mean_move = 0.0;
  EXPECT_THROW(GoodputController(set, ReconfigurationCost{}, bad), Error);
  bad = options();
  bad.refit_prior_sigma = std::nan("");
  EXPECT_THROW(GoodputController(set, ReconfigurationCost{}, bad), Error);
}

// Step times the caller gave (no model, no cluster): no cost-model refit, the per-family scale
// alone, as before.
TEST(GoodputControllerRefit, WithoutPricingOnlyTheFamilyScaleMoves) {
  const CandidateSet set = synthetic_candidates();
  GoodputController c(set, ReconfigurationCost{0.0, kRestartS, 0.0}, options());
  EXPECT_FALSE(c.refits_cost_model());
  EXPECT_EQ(c.priced_gpu(), nullptr);
  run_steps(c, 100, kNoise, 1.3);
  EXPECT_EQ(c.refit_count(), 0);
  EXPECT_EQ(c.refit_profile(), nullptr);
  for (std::size_t i = 0; i < set.candidates.size(); ++i) {
    EXPECT_EQ(c.model_step_time_s(i), set.candidates[i].predicted_step_time_s);
    const double scale = set.candidates[i].plan_index == set.candidates[c.current()].plan_index ? 1.3 : 1.0;
    EXPECT_NEAR(c.predicted_step_time_s(i) / set.candidates[i].predicted_step_time_s, scale, 1e-9);
  }
}

}  // namespace
}  // namespace tessera
