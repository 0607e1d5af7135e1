// Closed-form 1F1B and interleaved 1F1B makespans (Narayanan et al. SC'21, arXiv 2104.04473,
// §2.2): with p equal stages of time t per micro-batch, m micro-batches and v chunks per stage,
//   T = (m + p - 1) t            (1F1B / GPipe flush)
//   T = m t + (p - 1) t / v      (interleaved), bubble fraction (p - 1) / (v m).
#include "schedule/pipeline_bubble.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

namespace tessera {
namespace {

double rel_err(double got, double want) { return std::fabs(got - want) / std::fabs(want); }

TEST(PipelineBubble, UniformOneF1BIsMPlusPMinusOne) {
  for (long p : {1L, 2L, 4L, 8L, 12L, 16L, 64L})
    for (long m : {1L, 2L, 7L, 8L, 64L, 1536L})
      for (double t : {1e-3, 0.25, 3.0}) {
        const PipelineTimes r = pipeline_closed_form(double(p) * t, t, m, 1);
        EXPECT_LT(rel_err(r.makespan_s, double(m + p - 1) * t), 1e-12) << p << " " << m;
        EXPECT_LT(rel_err(r.steady_s, double(m) * t), 1e-12);
        EXPECT_NEAR(r.bubble_s, double(p - 1) * t, 1e-12 * double(p) * t);
        // Bubble fraction (p - 1) / m.
        EXPECT_NEAR(r.bubble_s / r.steady_s, double(p - 1) / double(m), 1e-12);
      }
}

TEST(PipelineBubble, UniformInterleavedDividesTheBubbleByV) {
  for (long p : {2L, 4L, 8L, 16L})
    for (long v : {1L, 2L, 3L, 4L, 8L})
      for (long m : {8L, 16L, 64L}) {
        const double t = 0.1;
        const PipelineTimes r = pipeline_closed_form(double(p) * t, t, m, v);
        const double want = double(m) * t + double(p - 1) * t / double(v);
        EXPECT_LT(rel_err(r.makespan_s, want), 1e-12) << p << " " << v << " " << m;
        EXPECT_NEAR(r.bubble_s / r.steady_s, double(p - 1) / double(v * m), 1e-12);
      }
}

TEST(PipelineBubble, NoPipelineNoBubble) {
  const PipelineTimes r = pipeline_closed_form(2.0, 2.0, 10, 1);
  EXPECT_EQ(r.bubble_s, 0.0);
  EXPECT_DOUBLE_EQ(r.makespan_s, 20.0);
}

// Uneven stages: the steady state runs at the slowest stage, and a single micro-batch must
// traverse every stage once, so T(m = 1, v = 1) = sum of stage times; T >= m * t_max always.
TEST(PipelineBubble, UnevenStagesBounds) {
  const double stages[] = {1.0, 1.5, 1.5, 1.5, 0.7};
  double sum = 0, max = 0;
  for (double s : stages) {
    sum += s;
    max = std::max(max, s);
  }
  const PipelineTimes one = pipeline_closed_form(sum, max, 1, 1);
  EXPECT_DOUBLE_EQ(one.makespan_s, sum);
  for (long m : {1L, 4L, 32L}) {
    const PipelineTimes r = pipeline_closed_form(sum, max, m, 1);
    EXPECT_GE(r.makespan_s, double(m) * max);
    EXPECT_GE(r.makespan_s, sum);
    EXPECT_DOUBLE_EQ(r.makespan_s, r.steady_s + r.bubble_s);
    EXPECT_GE(r.bubble_s, 0.0);
    // Never worse than running every stage at the slowest stage's pace.
    EXPECT_LE(r.makespan_s, double(m + 5 - 1) * max + 1e-12);
  }
}

TEST(PipelineBubble, MoreMicrobatchesShrinkTheBubbleFraction) {
  double prev = 1e300;
  for (long m = 1; m <= 1024; m *= 2) {
    const PipelineTimes r = pipeline_closed_form(8.0, 1.0, m, 1);
    const double fraction = r.bubble_s / r.makespan_s;
    EXPECT_LT(fraction, prev);
    prev = fraction;
  }
}

// Interleaved with unequal chunks: the fill and drain are set by the slowest chunk, (p - 1) of
// them; equal chunks give the same bubble as the stage form, (p - 1) t / v.
TEST(PipelineBubble, SlowestChunkSetsTheInterleavedFillWhenChunksDiffer) {
  const double t = 1.0;
  const long p = 8, v = 4, m = 32;
  const PipelineTimes equal = pipeline_closed_form(double(p) * t, t, m, v, double(p - 1) * t / double(v));
  EXPECT_DOUBLE_EQ(equal.bubble_s, double(p - 1) * t / double(v));
  // Each stage's 10 layers in chunks of 2, 2, 3, 3 (a 0.3 t chunk at most): the bubble is
  // 7 x 0.3 t, above the stage form's 7 t / 4.
  const PipelineTimes uneven = pipeline_closed_form(double(p) * t, t, m, v, double(p - 1) * 0.3 * t);
  EXPECT_DOUBLE_EQ(uneven.bubble_s, double(p - 1) * 0.3 * t);
  EXPECT_GT(uneven.bubble_s, equal.bubble_s);
  EXPECT_DOUBLE_EQ(uneven.steady_s, equal.steady_s);
}

}  // namespace
}  // namespace tessera
