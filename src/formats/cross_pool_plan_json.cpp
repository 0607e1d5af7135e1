#include "formats/cross_pool_plan_json.h"

#include <cstdint>
#include <vector>

namespace tessera {

std::string segment_precision_text(const PipelineSegment& segment) {
  return segment.precision == Precision::fp8 ? std::string("fp8=") + to_string(segment.fp8_recipe)
                                             : std::string(to_string(segment.precision));
}

nlohmann::json cross_pool_segments_to_json(const CrossPoolPlan& plan, const MixedCluster& cluster) {
  nlohmann::json segments = nlohmann::json::array();
  for (const auto& seg : plan.segments)
    segments.push_back({{"pool", seg.pool},
                        {"gpu", cluster.pools[seg.pool].gpu.key},
                        {"tp", seg.tp},
                        {"stages", seg.stages},
                        {"layers", seg.layers},
                        {"precision", segment_precision_text(seg)}});
  return segments;
}

nlohmann::json cross_pool_layout_to_json(const CrossPoolPlan& plan, const MixedCluster& cluster) {
  // Used pools in cluster order, each a contiguous block of ranks.
  std::vector<std::int64_t> pool_first_rank(cluster.pools.size(), 0);
  std::int64_t world = 0;
  for (std::size_t i = 0; i < cluster.pools.size(); ++i) {
    pool_first_rank[i] = world;
    for (const auto& seg : plan.segments)
      if (seg.pool == i) world += cluster.pools[i].gpus();
  }
  nlohmann::json stages = nlohmann::json::array();
  const std::int64_t total = plan.stages();
  std::int64_t stage = 0, layer = 0;
  for (const auto& seg : plan.segments) {
    const std::int64_t group = plan.base.dp * seg.tp;  // ranks of one stage
    for (std::int64_t i = 0; i < seg.stages; ++i, ++stage) {
      const std::int64_t first_rank = pool_first_rank[seg.pool] + i * group;
      nlohmann::json replicas = nlohmann::json::array();
      for (std::int64_t k = 0; k < plan.base.dp; ++k) {
        nlohmann::json ranks = nlohmann::json::array();
        for (std::int64_t j = 0; j < seg.tp; ++j) ranks.push_back(first_rank + k * seg.tp + j);
        replicas.push_back(std::move(ranks));
      }
      const std::int64_t layers = segment_stage_layers(seg, i);
      stages.push_back({{"stage", stage},
                        {"pool", seg.pool},
                        {"gpu", cluster.pools[seg.pool].gpu.key},
                        {"tp", seg.tp},
                        {"first_layer", layer},
                        {"layers", layers},
                        {"embedding", stage == 0},
                        {"output_head", stage == total - 1},
                        {"first_rank", first_rank},
                        {"replicas", std::move(replicas)},
                        // What each stage runs (issue 32: a launcher needs it per stage).
                        {"precision", segment_precision_text(seg)},
                        {"recompute", to_string(plan.base.recompute)},
                        {"recompute_layers", plan.base.recompute_layers},
                        {"zero", to_string(plan.base.zero)},
                        {"sequence_parallel", plan.base.sequence_parallel}});
      layer += layers;
    }
  }
  return {{"kind", kRankLayoutKind},
          {"schema_version", kRankLayoutSchemaVersion},
          {"world_size", world},
          {"rank_order", "pools in cluster order; in a pool, stage-major, then replica, tp innermost"},
          {"dp", plan.base.dp},
          {"micro_batch", plan.base.micro_batch},
          {"stages", std::move(stages)}};
}

}  // namespace tessera
