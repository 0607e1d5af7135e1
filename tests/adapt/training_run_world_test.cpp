// The progress integrals and the real cluster of the simulator's world.
#include <gtest/gtest.h>

#include <cmath>

#include "adapt/training_run_world.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"

namespace tessera {
namespace {

TEST(TrainingRunWorld, SegmentsTileTheRunAndIntegrateTheNoiseScale) {
  const ModelSpec model = builtin_model("llama3-8b");
  const Cluster cluster = load_cluster("h100-sxm-80gb:32");
  NoiseScaleScenario s = builtin_scenario("zero3-slower", model);
  s.max_batch = 64;  // a few planner calls
  const TrainingRunWorld w = make_training_run_world(model, cluster, s);
  ASSERT_FALSE(w.segment_end.empty());
  EXPECT_EQ(w.segment_end.back(), s.token_budget);
  for (std::size_t i = 1; i < w.segment_end.size(); ++i) EXPECT_GT(w.segment_end[i], w.segment_end[i - 1]);
  // J = integral dp / (B_noise(p) + B0), against a fine log-spaced trapezoid.
  double fine = 0;
  constexpr int kPoints = 200000;
  double previous_p = 0, previous_f = 1.0 / (s.noise_scale_at(0) + s.reference_batch);
  for (int k = 0; k <= kPoints; ++k) {
    const double p = s.token_budget * std::pow(1e-9, 1.0 - static_cast<double>(k) / kPoints);
    const double f = 1.0 / (s.noise_scale_at(p) + s.reference_batch);
    fine += 0.5 * (f + previous_f) * (p - previous_p);
    previous_p = p;
    previous_f = f;
  }
  EXPECT_NEAR(w.total_inverse / fine, 1.0, 1e-4);
  for (std::size_t c = 0; c < w.candidates.candidates.size(); ++c) {
    double tokens = 0;
    for (std::size_t i = 0; i < w.segment_end.size(); ++i) tokens += w.segment_tokens(i, c);
    EXPECT_NEAR(tokens / w.run_tokens(c), 1.0, 1e-9);
    // Bigger batches than the reference consume more tokens for the same progress.
    if (w.candidates.candidates[c].global_batch > s.reference_batch) {
      EXPECT_GT(w.run_tokens(c), s.token_budget);
    }
    // The real cluster: ZeRO-3 plans 18.2% slower, the rest as predicted.
    const bool zero3 = w.candidates.plan(w.candidates.candidates[c]).zero == OptimizerSharding::zero3;
    EXPECT_NEAR(w.true_step_time_s[c] / w.candidates.candidates[c].predicted_step_time_s, zero3 ? 1.182 : 1.0, 1e-9);
  }
}

TEST(TrainingRunWorld, RealClusterScalesOnlyTheScaleOutNetwork) {
  const Cluster cluster = load_cluster("h100-sxm-80gb:64");
  NoiseScaleScenario s;
  s.network_bandwidth_scale = 0.25;
  const Cluster real = real_cluster(cluster, s);
  EXPECT_DOUBLE_EQ(real.inter_node.bandwidth_bytes_per_s, 0.25 * cluster.inter_node.bandwidth_bytes_per_s);
  EXPECT_DOUBLE_EQ(real.intra_node.bandwidth_bytes_per_s, cluster.intra_node.bandwidth_bytes_per_s);
  EXPECT_EQ(real.gpus(), cluster.gpus());
}

}  // namespace
}  // namespace tessera
