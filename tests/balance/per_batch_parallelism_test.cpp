// Per-batch context parallelism: every micro-batch and every sample placed exactly once on random
// streams; no step slower than the static plan at any static degree (those groupings are in the
// choice set); the lower bound holds under every decision; one long document gets the degree that
// minimises its cost function (brute force over the allowed degrees), never below its memory
// minimum; only node-respecting degrees; bad GPU counts refused. Also the stream where it pays
// (long-video batches between caption batches) gains, and video-like gains no more than its bound.
#include "balance/per_batch_parallelism.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "balance/context_parallel_sharding.h"
#include "balance/per_batch_stream.h"
#include "catalog/data_mixes.h"
#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "common/thrown_field.h"
#include "core/seeded_random.h"
#include "formats/data_mix_json.h"

namespace tessera {
namespace {

constexpr double kRelTol = 1e-9;

CpCostModel cost_model(int gpus) {
  return make_cp_cost_model(builtin_model("llama3-8b"), make_cluster(find_gpu("h100-sxm-80gb"), gpus), gpus,
                            Recompute::full);
}

// A step of `n` micro-batches: one document of up to all the GPUs' memory (20%) or 1 to 6 short
// ones.
StepBatch random_step(SeededRandom& rng, int n, std::int64_t cap, int gpus) {
  StepBatch b;
  std::vector<std::int64_t> docs;
  for (int i = 0; i < n; ++i) {
    docs.clear();
    if (rng.uniform() < 0.2) {
      docs.push_back(1 + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(gpus * cap))));
    } else {
      const auto count = 1 + rng.below(6);
      for (std::uint64_t d = 0; d < count; ++d) docs.push_back(64 + static_cast<std::int64_t>(rng.below(4000)));
    }
    b.add(docs);
  }
  return b;
}

TEST(PerBatchParallelism, AllowedDegreesRespectNodes) {
  EXPECT_EQ(allowed_cp_degrees(16, 8), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 16}));
  EXPECT_EQ(allowed_cp_degrees(24, 8), (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 16, 24}));
  EXPECT_EQ(static_cp_degrees(24, 8), (std::vector<int>{1, 2, 4, 8, 24}));  // 3, 6 would straddle nodes
  EXPECT_EQ(static_cp_degrees(6, 8), (std::vector<int>{1, 2, 3, 6}));
  EXPECT_EQ(allowed_cp_degrees(6, 8), (std::vector<int>{1, 2, 3, 4, 5, 6}));
}

TEST(PerBatchParallelism, RandomStepsPlaceEachMicrobatchOnceAndNeverLoseToStatic) {
  for (int gpus : {8, 16, 24}) {
    PerBatchCpPlanner planner(cost_model(gpus), gpus);
    SeededRandom rng(static_cast<std::uint64_t>(gpus));
    const std::int64_t cap = cost_model(gpus).max_tokens_per_gpu;
    for (int trial = 0; trial < 40; ++trial) {
      const StepBatch step = random_step(rng, 1 + static_cast<int>(rng.below(40)), cap, gpus);
      planner.cost_step(step);
      const StepDecision chosen = planner.per_batch_decision();  // a copy: the next calls reuse it
      const auto broken = decision_violations(chosen, planner, step.size());
      ASSERT_TRUE(broken.empty()) << gpus << " GPUs, trial " << trial << ": " << broken.front();
      EXPECT_LE(chosen.lower_bound_s, chosen.step_time_s * (1 + kRelTol));
      for (int c : planner.static_degrees()) {
        const StepDecision fixed = planner.static_decision(c);
        if (std::isfinite(fixed.step_time_s)) {
          const auto fixed_broken = decision_violations(fixed, planner, step.size());
          EXPECT_TRUE(fixed_broken.empty()) << fixed_broken.front();
          EXPECT_LE(chosen.step_time_s, fixed.step_time_s * (1 + kRelTol)) << "cp " << c;
        }
      }
    }
  }
}

TEST(PerBatchParallelism, OneLongDocumentGetsTheArgminOfItsCost) {
  const int gpus = 16;
  const CpCostModel model = cost_model(gpus);
  PerBatchCpPlanner planner(model, gpus);
  CpCostScratch scratch;
  for (std::int64_t length : {2'000LL, 9'000LL, 40'000LL, 100'000LL, 131'072LL}) {
    StepBatch step;
    const std::vector<std::int64_t> doc = {length};
    step.add(doc);
    planner.cost_step(step);
    const StepDecision d = planner.per_batch_decision();
    int best = 0;
    double best_s = StepDecision::kInfeasible;
    for (int c : planner.degrees()) {
      if (c < model.min_degree(length)) continue;
      const double t = cp_microbatch_time(model, doc, c, scratch).total_s;
      if (t < best_s) {
        best_s = t;
        best = c;
      }
    }
    int used = 0;
    for (const CpGroup& g : d.groups)
      if (!g.microbatches.empty()) used = g.degree;
    EXPECT_EQ(used, best) << length;
    EXPECT_NEAR(d.step_time_s, best_s, kRelTol * best_s) << length;
    EXPECT_GE(used, (length + model.max_tokens_per_gpu - 1) / model.max_tokens_per_gpu);
  }
}

TEST(PerBatchParallelism, OneGpuTimeIsTheSpanCostClosedForm) {
  const CpCostModel model = cost_model(8);
  CpCostScratch scratch;
  const std::int64_t length = 64 * kAttentionQueryTileRows;  // whole tiles, even: no padding
  const std::vector<std::int64_t> doc = {length};
  const CpMicrobatchTime t = cp_microbatch_time(model, doc, 1, scratch);
  const SpanCost cost = model.span_cost(static_cast<double>(length));
  EXPECT_NEAR(t.compute_s, cost.time_s(static_cast<double>(length)), kRelTol * t.compute_s);
  EXPECT_EQ(t.exposed_ring_s, 0.0);
  EXPECT_EQ(t.launch_s, 0.0);
  EXPECT_EQ(t.total_s, std::max(t.compute_s, t.host_s));
}

TEST(PerBatchParallelism, RingIsExposedWhenAttentionIsShort) {
  // 4 short documents over 8 ranks: little attention per rank to hide the KV exchange behind.
  const CpCostModel model = cost_model(8);
  CpCostScratch scratch;
  const std::vector<std::int64_t> docs = {512, 512, 512, 512};
  EXPECT_GT(cp_microbatch_time(model, docs, 8, scratch).exposed_ring_s, 0.0);
  // A long document's attention hides it: nothing exposed inside a node.
  const std::vector<std::int64_t> long_doc = {131'072};
  EXPECT_EQ(cp_microbatch_time(model, long_doc, 8, scratch).exposed_ring_s, 0.0);
}

TEST(PerBatchParallelism, MemoryCapGrowsWithGpusAndShrinksWithoutRecompute) {
  const ModelSpec m = builtin_model("llama3-8b");
  const GpuSpec& gpu = find_gpu("h100-sxm-80gb");
  EXPECT_LT(max_tokens_per_gpu(m, gpu, 8, Recompute::full), max_tokens_per_gpu(m, gpu, 32, Recompute::full));
  EXPECT_LT(max_tokens_per_gpu(m, gpu, 8, Recompute::none), max_tokens_per_gpu(m, gpu, 8, Recompute::full));
}

TEST(PerBatchParallelism, BadInputNamesTheField) {
  using testing::thrown_field;
  const CpCostModel model = cost_model(16);
  EXPECT_EQ(thrown_field([&] { PerBatchCpPlanner(model, 12); }), "gpus");  // not whole nodes of 8
  EXPECT_EQ(thrown_field([&] { PerBatchCpPlanner(model, 0); }), "gpus");
  PerBatchCpPlanner planner(model, 16);
  EXPECT_EQ(thrown_field([&] { planner.static_decision(3); }), "cp");  // 3 does not divide 16
  StepBatch too_long;
  const std::vector<std::int64_t> doc = {16 * model.max_tokens_per_gpu + 1};
  too_long.add(doc);
  EXPECT_EQ(thrown_field([&] { planner.cost_step(too_long); }), "gpus");
  PerBatchStreamSettings s;
  EXPECT_EQ(thrown_field([&] { draw_stream(s); }), "mix");
  s.mixes = {{long_video_mix(), 1.0}};
  s.step_tokens = 8192;
  EXPECT_EQ(thrown_field([&] { draw_stream(s); }), "step_tokens");
  s.step_tokens = 262'144;
  s.steps = 0;
  EXPECT_EQ(thrown_field([&] { draw_stream(s); }), "steps");
  s.steps = 1;
  s.mixes = {{load_data_mix("audio-like"), 1.0}};
  EXPECT_EQ(thrown_field([&] { draw_stream(s); }), "mix");
}

TEST(PerBatchParallelism, StreamsPlaceEverySampleOnce) {
  for (bool per_sequence : {false, true}) {
    PerBatchStreamSettings s;
    s.mixes = {{long_video_mix(), 0.3}, {load_data_mix("caption-like"), 0.7}};
    s.mix_per_sequence = per_sequence;
    s.steps = 40;
    s.seed = 7;
    const DrawnStream stream = draw_stream(s);
    PerBatchCpPlanner planner(cost_model(32), 32);
    const PerBatchStreamResult r = run_per_batch_stream(stream, planner);
    EXPECT_TRUE(r.violations.empty()) << r.violations.front();
    EXPECT_EQ(r.samples + static_cast<std::int64_t>(stream.unplaced.size()), stream.drawn_samples);
    EXPECT_LE(r.per_batch_time_s, r.static_time_s * (1 + kRelTol));
    EXPECT_GE(r.per_batch_time_s, r.lower_bound_time_s * (1 - kRelTol));
  }
}

TEST(PerBatchParallelism, LongVideoBetweenCaptionBatchesPays) {
  PerBatchStreamSettings s;
  s.mixes = {{long_video_mix(), 0.25}, {load_data_mix("caption-like"), 0.75}};
  s.steps = 200;
  PerBatchCpPlanner planner(cost_model(16), 16);
  const PerBatchStreamResult r = run_per_batch_stream(draw_stream(s), planner);
  // A 128K video needs all 16 GPUs (memory), the static plan keeps them for captions too.
  EXPECT_EQ(r.best_static_degree, 16);
  EXPECT_GT(r.gain, 1.0);
  EXPECT_LE(r.gain, r.gain_bound * (1 + kRelTol));
}

TEST(PerBatchParallelism, VideoLikeGainIsCappedByItsBound) {
  PerBatchStreamSettings s;
  s.mixes = {{load_data_mix("video-like"), 1.0}};
  s.steps = 100;
  PerBatchCpPlanner planner(cost_model(8), 8);
  const PerBatchStreamResult r = run_per_batch_stream(draw_stream(s), planner);
  // Every 8K sequence fits one GPU and is cheapest there: static cp 1 is already what any
  // grouping could do, up to the rounding of 32 micro-batches over 8 GPUs.
  EXPECT_EQ(r.best_static_degree, 1);
  EXPECT_LE(r.gain, r.gain_bound * (1 + kRelTol));
  EXPECT_LT(r.gain_bound, 0.10);
}

}  // namespace
}  // namespace tessera
