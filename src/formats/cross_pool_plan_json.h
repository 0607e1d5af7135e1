// A cross-pool pipeline (plan/cross_pool_plan.h) as JSON: its segments, and its rank layout.
//
// The segments: [{"pool", "gpu", "tp", "stages", "layers", "precision"}] in pipeline order,
// precision "bf16" or "fp8=<recipe>".
//
// The rank layout: which global ranks
// run which pipeline stage, its layers and its tp. Megatron-LM's arguments cannot describe stages
// with different tp and GPU types, so a launcher (or a framework with heterogeneous pipelines)
// reads this instead. README "Cross-pool pipelines" documents it:
//   {"kind": "tessera-rank-layout", "schema_version": 1, "world_size": N,
//    "rank_order": "pools in cluster order; in a pool, stage-major, then replica, tp innermost",
//    "dp": D, "micro_batch": B, "stages": [
//      {"stage": s, "pool": i, "gpu": "key", "tp": t, "first_layer": l, "layers": n,
//       "embedding": bool, "output_head": bool, "first_rank": r,
//       "replicas": [[r, ..., r + t - 1], ...],       (D lists of t ranks: replica k's tp group)
//       "precision": "bf16" | "fp8=<recipe>", "recompute", "recompute_layers", "zero",
//       "sequence_parallel"}]}                        (what the stage runs)
// Global rank of (stage s, replica k, tp rank j) = first_rank(s) + k t + j. The pools the
// pipeline uses hold contiguous blocks of ranks in cluster order; pools it leaves out hold none.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "hardware/mixed_cluster.h"
#include "plan/cross_pool_plan.h"

namespace tessera {

inline constexpr const char* kRankLayoutKind = "tessera-rank-layout";
inline constexpr int kRankLayoutSchemaVersion = 1;

// "bf16", or "fp8=tensorwise": a segment's precision with its recipe.
std::string segment_precision_text(const PipelineSegment& segment);

// Preconditions: validate_cross_pool_plan() passed.
nlohmann::json cross_pool_segments_to_json(const CrossPoolPlan& plan, const MixedCluster& cluster);
nlohmann::json cross_pool_layout_to_json(const CrossPoolPlan& plan, const MixedCluster& cluster);

}  // namespace tessera
