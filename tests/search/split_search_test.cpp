// The disaggregated split search: every split's lower bound against its simulated step, and the
// branch and bound against simulating every split of every backbone count.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include <fmt/core.h>

#include "catalog/data_mixes.h"
#include "catalog/gpu_catalog.h"
#include "common/small_multimodal_model.h"
#include "search/module_group.h"
#include "search/planner.h"
#include "search/split_search.h"

namespace tessera {
namespace {

constexpr std::int64_t kGlobalBatch = 64;
constexpr std::int64_t kSequenceTokens = 8192;
constexpr const char* kClusters[] = {"h100-sxm-80gb:24", "h100-sxm-80gb:48", "a100-sxm-80gb:64"};
// Where the busiest stage's work is the whole step the bound is tight, and the bound's sum and the
// simulation's round differently in the last bits (measured: at most 2e-15 relative).
constexpr double kSplitRoundingSlack = 1e-12;  // relative

// The bound is at most the time, up to rounding.
bool split_bounds(double bound_s, double time_s) { return bound_s <= time_s * (1 + kSplitRoundingSlack); }

// One request of the small model on a cluster, packed once.
struct Request {
  Cluster cluster;
  std::vector<PackedSequence> sequences;
  std::vector<ModuleGroup> groups;
  MultimodalOptions options;
  SplitRequest split() const {
    return {testing::small_multimodal_model(), cluster,        sequences, groups,
            {kGlobalBatch, kSequenceTokens},    memory_limit(cluster, PlanConstraints{}).limit_bytes, options};
  }
};

Request request(const char* cluster_text, bool exhaustive) {
  const MultimodalSpec& model = testing::small_multimodal_model();
  DataMix mix = load_data_mix("caption-like");
  mix.sequence_tokens = kSequenceTokens;
  Request r{load_cluster(cluster_text), pack_sequences(model, mix, kGlobalBatch, MultimodalOptions{}.seed), {}, {}};
  r.groups = module_groups(model, r.cluster.gpus_per_node);
  r.options.exhaustive = exhaustive;
  return r;
}

// Each split's lower bound (its count's envelope bound, its first group's option bound and its
// own stage bound, the largest of the three) is at most its simulated step: every split of every
// count, none pruned.
TEST(SplitSearch, LowerBoundsAreNeverAboveTheSimulatedStep) {
  for (const char* cluster_text : kClusters) {
    const Request r = request(cluster_text, /*exhaustive=*/true);
    const SplitRequest split = r.split();
    const SplitSpace space = split_candidates(split);
    ASSERT_FALSE(space.candidates.empty()) << cluster_text;
    for (const SplitCandidate& c : space.candidates) {
      const BackboneOptions& b = space.backbones[c.backbone];
      EXPECT_PRED2(split_bounds, c.lower_bound_s, split_time_s(split, b, c))
          << cluster_text << " backbone on " << b.backbone.gpus;
    }
    fmt::print("{}: {} splits' bounds checked\n", cluster_text, space.candidates.size());
  }
}

// The pruned search lists the top_k backbone counts, each at its best split, as simulating every
// split of every count (each group's every option, dominated or not) finds them.
TEST(SplitSearch, BestSplitsAreTheBestOfEverySplitPerBackboneCount) {
  constexpr std::size_t kTop = 3;
  for (const char* cluster_text : kClusters) {
    const Request all = request(cluster_text, /*exhaustive=*/true);
    const SplitSpace every = split_candidates(all.split());
    std::map<std::int64_t, double> best_s;  // backbone GPUs -> its best split's step
    for (const SplitCandidate& c : every.candidates) {
      const BackboneOptions& b = every.backbones[c.backbone];
      const double time_s = split_time_s(all.split(), b, c);
      const auto [it, added] = best_s.emplace(b.backbone.gpus, time_s);
      if (!added) it->second = std::min(it->second, time_s);
    }
    std::vector<double> ranked_s;
    for (const auto& [gpus, time_s] : best_s) ranked_s.push_back(time_s);
    std::sort(ranked_s.begin(), ranked_s.end());

    Request pruned = request(cluster_text, /*exhaustive=*/false);
    pruned.options.top_k = kTop;
    SplitSpace space = split_candidates(pruned.split());
    const std::vector<MultimodalPlan> plans = best_splits(pruned.split(), space);
    ASSERT_EQ(plans.size(), std::min(kTop, ranked_s.size())) << cluster_text;
    EXPECT_LT(space.simulated, static_cast<std::int64_t>(every.candidates.size())) << cluster_text;  // it pruned
    for (std::size_t i = 0; i < plans.size(); ++i) {
      EXPECT_EQ(plans[i].iteration_time_s, ranked_s[i]) << cluster_text << " #" << i;
      EXPECT_EQ(plans[i].iteration_time_s, best_s.at(plans[i].backbone_gpus)) << cluster_text << " #" << i;
    }
  }
}

}  // namespace
}  // namespace tessera
