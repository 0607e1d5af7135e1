// The multimodal planner: exact against brute force on small clusters, monotone in GPUs, driven
// by the data mix, and the DistTrain-scale case.
#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include <fmt/core.h>

#include "catalog/data_mixes.h"
#include "catalog/gpu_catalog.h"
#include "catalog/multimodal_models.h"
#include "common/small_multimodal_model.h"
#include "core/error.h"
#include "core/units.h"
#include "cost/cost_model.h"
#include "formats/data_mix_json.h"
#include "formats/multimodal_json.h"
#include "search/multimodal_planner.h"

namespace tessera {
namespace {

const MultimodalSpec& small_model() { return testing::small_multimodal_model(); }

DataMix mix_with_sequence(const std::string& name, std::int64_t sequence_tokens) {
  DataMix mix = load_data_mix(name);
  mix.sequence_tokens = sequence_tokens;
  return mix;
}

std::int64_t gpus_of(const MultimodalPlan& p, ModuleRole role) {
  for (const auto& m : p.modules)
    if (m.role == role) return m.gpus;
  return -1;
}

// Branch and bound over "at most G" tables finds the same best time as simulating every split
// (every backbone count, every GPU count per group, the rest idle).
TEST(MultimodalPlanner, EqualsBruteForceOnSmallClusters) {
  const DataMix mix = mix_with_sequence("caption-like", 8192);
  for (const char* cluster_text : {"h100-sxm-80gb:24", "h100-sxm-80gb:48", "a100-sxm-80gb:64"}) {
    const Cluster cluster = load_cluster(cluster_text);
    MultimodalOptions fast;
    fast.top_k = 1;
    MultimodalOptions brute = fast;
    brute.exhaustive = true;
    const MultimodalSearch a = search_multimodal_plans(small_model(), cluster, mix, 64, fast);
    const MultimodalSearch b = search_multimodal_plans(small_model(), cluster, mix, 64, brute);
    ASSERT_FALSE(a.plans.empty()) << cluster_text;
    ASSERT_FALSE(b.plans.empty()) << cluster_text;
    fmt::print("{}: branch and bound simulated {} splits, brute force {}\n", cluster_text, a.simulated, b.simulated);
    EXPECT_LT(a.simulated, b.simulated) << cluster_text;  // the bounds pruned
    EXPECT_DOUBLE_EQ(a.plans[0].iteration_time_s, b.plans[0].iteration_time_s) << cluster_text;
  }
}

// More GPUs never make the best plan slower (the bigger cluster can leave them idle).
TEST(MultimodalPlanner, AddingGpusNeverMakesItSlower) {
  const DataMix mix = mix_with_sequence("caption-like", 8192);
  double previous = 0;
  for (std::int64_t gpus = 16; gpus <= 96; gpus += 8) {
    const MultimodalSearch s =
        search_multimodal_plans(small_model(), load_cluster("h100-sxm-80gb:" + std::to_string(gpus)), mix, 64);
    ASSERT_FALSE(s.plans.empty()) << gpus;
    if (previous > 0) {
      EXPECT_LE(s.plans[0].iteration_time_s, previous) << gpus;
    }
    previous = s.plans[0].iteration_time_s;
  }
}

// Heavier images -> the encoder group gets at least as many GPUs, on the backbone layout that wins
// either mix (compared with the same layout in the other mix's ranking). Across layouts it is not a
// law: the two best layouts of a mix can sit within 0.1% of each other, so which one comes first
// is a near-tie, not a property of the mix.
TEST(MultimodalPlanner, ImageHeavierMixGivesTheEncoderAtLeastAsManyGpus) {
  const Cluster cluster = load_cluster("h100-sxm-80gb:64");
  DataMix light = mix_with_sequence("caption-like", 8192);
  light.image_sizes = {{224, 1.0}};
  DataMix heavy = light;
  heavy.image_sizes = {{672, 1.0}};
  const MultimodalSearch a = search_multimodal_plans(small_model(), cluster, light, 64);
  const MultimodalSearch b = search_multimodal_plans(small_model(), cluster, heavy, 64);
  ASSERT_FALSE(a.plans.empty());
  ASSERT_FALSE(b.plans.empty());
  const auto same_backbone = [](const MultimodalPlan& x, const MultimodalPlan& y) {
    const Plan &p = x.backbone_plan, &q = y.backbone_plan;
    return x.backbone_gpus == y.backbone_gpus && p.tp == q.tp && p.pp == q.pp && p.dp == q.dp && p.zero == q.zero;
  };
  int compared = 0;
  for (const MultimodalPlan& l : a.plans)
    for (const MultimodalPlan& h : b.plans)
      if (same_backbone(l, h) && (&l == &a.plans[0] || &h == &b.plans[0])) {
        ++compared;
        EXPECT_GE(gpus_of(h, ModuleRole::encoder), gpus_of(l, ModuleRole::encoder)) << l.backbone_gpus;
      }
  EXPECT_GE(compared, 1);
  EXPECT_GT(b.media_token_fraction, a.media_token_fraction);
}

// MFU is the sum of every module's model FLOPs over time x GPUs x peak; a text-only mix needs no
// encoder GPUs and leaves the backbone alone's plan as good as it gets.
TEST(MultimodalPlanner, MfuAndTextOnlyAccounting) {
  const Cluster cluster = load_cluster("h100-sxm-80gb:64");
  const MultimodalSearch s = search_multimodal_plans(small_model(), cluster, mix_with_sequence("caption-like", 8192), 64);
  ASSERT_FALSE(s.plans.empty());
  const MultimodalPlan& p = s.plans[0];
  EXPECT_DOUBLE_EQ(p.mfu, p.model_flops / (p.iteration_time_s * 64 * cluster.gpu.peak_flops(false)));
  EXPECT_EQ(p.gpus_used + p.gpus_idle, 64);
  EXPECT_TRUE(p.fits);
  // The monolithic step runs every backbone op plus the modules' work on its first and last
  // stages: never faster than the backbone alone on that layout.
  ASSERT_TRUE(s.monolithic_found);
  const Estimate alone = estimate(small_model().backbone().transformer, cluster, s.monolithic.backbone_plan, {64, 8192});
  EXPECT_GE(s.monolithic.iteration_time_s, alone.iteration_time_s);

  const MultimodalSearch text = search_multimodal_plans(small_model(), cluster, mix_with_sequence("text-only", 8192), 64);
  ASSERT_FALSE(text.plans.empty());
  EXPECT_EQ(gpus_of(text.plans[0], ModuleRole::encoder), 0);
  EXPECT_EQ(gpus_of(text.plans[0], ModuleRole::generator), 0);
  EXPECT_NEAR(text.plans[0].mfu, text.backbone_only_mfu, 1e-9);
}

// Issue 5: mllm-72b-gen on caption-like, 1,296 H800s, 1,920 sequences: disaggregated >= 1.3x
// the monolithic step rate, and its MFU >= 0.9x the backbone alone's (DistTrain reports 54.7%
// MFU on 1,172 GPUs and up to 2.2x Megatron-LM).
TEST(MultimodalPlanner, DisaggregatedBeatsMonolithicAtDistTrainScale) {
  const MultimodalSearch s = search_multimodal_plans(load_multimodal_model("mllm-72b-gen"), load_cluster("h800:1296"),
                                                     load_data_mix("caption-like"), 1920);
  ASSERT_FALSE(s.plans.empty());
  ASSERT_TRUE(s.monolithic_found);
  const double speedup = s.monolithic.iteration_time_s / s.plans[0].iteration_time_s;
  fmt::print("mllm-72b-gen caption-like h800:1296: disaggregated {:.3f} s (MFU {:.1f}%), monolithic {:.3f} s "
             "(MFU {:.1f}%), backbone alone MFU {:.1f}%, speedup {:.2f}x, search {:.3f} s\n",
             s.plans[0].iteration_time_s, 100 * s.plans[0].mfu, s.monolithic.iteration_time_s, 100 * s.monolithic.mfu,
             100 * s.backbone_only_mfu, speedup, s.search_time_s);
  EXPECT_GE(speedup, 1.3);
  EXPECT_GE(s.plans[0].mfu, 0.9 * s.backbone_only_mfu);
  EXPECT_TRUE(s.plans[0].fits);
  EXPECT_TRUE(s.monolithic.fits);
}

// The trace of a disaggregated step: the encoder stage, the backbone's stages, the generator.
TEST(MultimodalPlanner, TimelineHasAStagePerGroupAndBackboneStage) {
  const Cluster cluster = load_cluster("h100-sxm-80gb:64");
  const DataMix mix = mix_with_sequence("caption-like", 8192);
  const MultimodalSearch s = search_multimodal_plans(small_model(), cluster, mix, 64);
  ASSERT_FALSE(s.plans.empty());
  const Timeline t = disaggregated_timeline(small_model(), cluster, mix, 64, s.plans[0], 1);
  EXPECT_EQ(static_cast<std::int64_t>(t.stages.size()), s.plans[0].backbone_plan.pp + 2);
  EXPECT_LE(t.makespan_s, s.plans[0].iteration_time_s);
}

// The colocated strategy's space holds the monolithic layout on every GPU, so it is never slower;
// the ranking lists every strategy found, fastest first, with ties in the documented order
// (colocated after monolithic: a tie means the colocated plan is the monolithic layout).
TEST(MultimodalPlanner, ColocatedNeverSlowerThanMonolithicAndRankingIsOrdered) {
  const DataMix mix = mix_with_sequence("caption-like", 8192);
  for (const char* cluster_text : {"h100-sxm-80gb:32", "h100-sxm-80gb:64"}) {
    const MultimodalSearch s = search_multimodal_plans(small_model(), load_cluster(cluster_text), mix, 64);
    ASSERT_TRUE(s.monolithic_found) << cluster_text;
    ASSERT_TRUE(s.colocated_found) << cluster_text;
    EXPECT_TRUE(s.colocated.colocated);
    EXPECT_TRUE(s.colocated.fits);
    EXPECT_LE(s.colocated.iteration_time_s, s.monolithic.iteration_time_s) << cluster_text;
    const std::vector<MultimodalStrategy> ranked = ranked_strategies(s);
    ASSERT_EQ(ranked.size(), 2u + (s.plans.empty() ? 0u : 1u) + (s.monolithic_subset_found ? 1u : 0u));
    EXPECT_EQ(ranked.front(), recommended_strategy(s));
    for (std::size_t i = 1; i < ranked.size(); ++i) {
      const double before = strategy_plan(s, ranked[i - 1]).iteration_time_s;
      const double here = strategy_plan(s, ranked[i]).iteration_time_s;
      EXPECT_LE(before, here);
      if (before == here) {
        EXPECT_LT(static_cast<int>(ranked[i - 1]), static_cast<int>(ranked[i]));  // the enum holds the tie order
      }
    }
    const auto mono = std::find(ranked.begin(), ranked.end(), MultimodalStrategy::monolithic);
    const auto colo = std::find(ranked.begin(), ranked.end(), MultimodalStrategy::colocated);
    if (s.colocated.iteration_time_s == s.monolithic.iteration_time_s) {
      EXPECT_LT(mono, colo);
    }
  }
}

// Issue 13: the split search's work grows with the cluster; past its documented size it is
// refused up front, naming the cluster, before any work (so this returns at once).
TEST(MultimodalPlanner, ClustersPastTheSearchLimitAreRefusedUpFront) {
  try {
    (void)search_multimodal_plans(load_multimodal_model("mllm-72b-gen"), load_cluster("h100-sxm-80gb:100000"),
                                  load_data_mix("caption-like"), 1920);
    ADD_FAILURE() << "no error for 100,000 GPUs";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "cluster") << e.what();
  }
  try {
    (void)search_multimodal_plans(load_multimodal_model("mllm-72b-gen"), load_cluster("h800:1296"),
                                  load_data_mix("caption-like"), 100'000'000);
    ADD_FAILURE() << "no error for 10^8 sequences";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "gbs") << e.what();
  }
}

}  // namespace
}  // namespace tessera
