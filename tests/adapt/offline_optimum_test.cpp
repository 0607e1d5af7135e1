// The dynamic program against brute force over every sequence of configurations on a small world.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "adapt/offline_optimum.h"

namespace tessera {
namespace {

// Three configurations (16 and 64 sequences on plan 0, 64 on plan 1), six progress segments over
// which the noise scale grows from 4 to 4000 sequences.
TrainingRunWorld small_adaptive_world(double batch_change_s, double plan_change_s) {
  TrainingRunWorld w;
  w.scenario.name = "test";
  w.scenario.seq_len = 1000;
  w.scenario.reference_batch = 16;
  w.scenario.min_batch = 16;
  w.scenario.max_batch = 64;
  w.scenario.token_budget = 6e9;
  Plan p0, p1;
  p0.dp = 8;
  p1.tp = 2;
  p1.dp = 4;
  w.candidates.seq_len = 1000;
  w.candidates.plans = {p0, p1};
  w.candidates.batches = {16, 64};
  w.candidates.candidates = {Candidate{16, 0, 0.45}, Candidate{64, 0, 0.8}, Candidate{64, 1, 0.82}};
  w.true_step_time_s = {0.45, 0.8, 0.76};  // plan 1 runs faster than predicted
  w.cost = ReconfigurationCost{batch_change_s, plan_change_s, 0.0};
  const double noise[] = {4, 15, 60, 250, 1000, 4000};
  for (int i = 0; i < 6; ++i) {
    w.segment_end.push_back(1e9 * (i + 1));
    w.segment_inverse.push_back(1e9 / (noise[i] + 16.0));  // J with the noise scale constant per segment
    w.total_inverse += w.segment_inverse.back();
  }
  return w;
}

double brute_force(const TrainingRunWorld& w) {
  const std::size_t n = w.candidates.candidates.size(), segments = w.segment_end.size();
  double best = std::numeric_limits<double>::infinity();
  std::size_t total = 1;
  for (std::size_t i = 0; i < segments; ++i) total *= n;
  for (std::size_t code = 0; code < total; ++code) {
    double t = 0;
    std::size_t rest = code, previous = n;
    for (std::size_t i = 0; i < segments; ++i, rest /= n) {
      const std::size_t c = rest % n;
      if (previous != n && c != previous) {
        const bool plan = w.candidates.candidates[c].plan_index != w.candidates.candidates[previous].plan_index;
        t += plan ? w.cost.plan_change_s : w.cost.batch_change_s;
      }
      t += w.segment_tokens(i, c) / w.true_tokens_per_s(c);
      previous = c;
    }
    best = std::min(best, t);
  }
  return best;
}

TEST(OfflineOptimum, EqualsBruteForceOverEverySequence) {
  for (const auto& [batch_s, plan_s] : {std::pair{0.0, 0.0}, std::pair{10.0, 1000.0}, std::pair{0.0, 1e5},
                                        std::pair{2000.0, 3000.0}}) {
    const TrainingRunWorld w = small_adaptive_world(batch_s, plan_s);
    const PolicyRun run = offline_optimum(w);
    EXPECT_NEAR(run.time_to_target_s / brute_force(w), 1.0, 1e-12) << batch_s << " " << plan_s;
    // Its schedule, replayed, takes the time it reports.
    double replay = run.reconfiguration_s;
    double tokens = 0;
    std::size_t seg_of_run = 0;
    for (std::size_t i = 0; i < w.segment_end.size(); ++i) {
      while (seg_of_run + 1 < run.segments.size() && run.segments[seg_of_run + 1].start_tokens <= tokens + 1e-6)
        ++seg_of_run;
      const std::size_t c = run.segments[seg_of_run].candidate;
      replay += w.segment_tokens(i, c) / w.true_tokens_per_s(c);
      tokens += w.segment_tokens(i, c);
    }
    EXPECT_NEAR(replay / run.time_to_target_s, 1.0, 1e-12);
    EXPECT_NEAR(run.consumed_tokens, tokens, 1e-3);
    // No static choice beats it.
    const std::size_t best = best_static_candidate(w, StepTimes::real);
    EXPECT_LE(run.time_to_target_s, static_time_to_target_s(w, best, StepTimes::real) * (1.0 + 1e-12));
  }
}

// Free switches: the optimum moves to the bigger batch as the noise scale grows; prohibitive ones:
// it stays on the best static configuration.
TEST(OfflineOptimum, SwitchesOnlyWhenTheyPay) {
  const PolicyRun free = offline_optimum(small_adaptive_world(0.0, 0.0));
  EXPECT_GE(free.segments.size(), 2u);
  EXPECT_EQ(free.segments.front().candidate, 0u);  // 16 sequences while the noise scale is small
  const TrainingRunWorld costly = small_adaptive_world(1e7, 1e7);
  const PolicyRun stuck = offline_optimum(costly);
  ASSERT_EQ(stuck.segments.size(), 1u);
  EXPECT_EQ(stuck.segments[0].candidate, best_static_candidate(costly, StepTimes::real));
  EXPECT_EQ(stuck.batch_changes + stuck.plan_changes, 0);
  // Predicted and real step times can pick different static configurations.
  EXPECT_EQ(best_static_candidate(costly, StepTimes::predicted), 1u);
  EXPECT_EQ(best_static_candidate(costly, StepTimes::real), 2u);
}

}  // namespace
}  // namespace tessera
