// Plan: how one training job is laid out: parallel degrees, micro-batch, recompute, optimizer
// sharding, precision and overlap switches. Workload: what is trained (global batch, sequence).
// Value types, validated once against a model and a cluster.
#pragma once

#include <cstdint>
#include <algorithm>
#include <string>
#include <vector>

#include "core/checks.h"
#include "hardware/cluster.h"
#include "model/flops.h"
#include "model/model_spec.h"

namespace tessera {

enum class OptimizerSharding { none, zero1, zero2, zero3 };
enum class Precision { bf16, fp8 };

const char* to_string(OptimizerSharding value);
const char* to_string(Precision value);
OptimizerSharding parse_optimizer_sharding(const std::string& text);  // Error("zero", ...)
Precision parse_precision(const std::string& text);                   // Error("precision", ...)

struct Workload {
  std::int64_t global_batch = 0;  // sequences per optimizer step
  std::int64_t seq_len = 0;       // tokens per sequence
  double tokens() const { return static_cast<double>(global_batch) * seq_len; }
  void validate() const;
};

struct Plan {
  std::int64_t tp = 1;
  std::int64_t pp = 1;
  std::int64_t dp = 1;
  std::int64_t cp = 1;
  std::int64_t ep = 1;   // carved from dp x cp x tp of a stage (Megatron-Core), adds no GPUs
  std::int64_t vpp = 1;  // model chunks per pipeline stage (1 = plain 1F1B)
  std::int64_t micro_batch = 1;
  bool sequence_parallel = false;
  Recompute recompute = Recompute::none;
  // With recompute = full: recompute only the first N layers of each model chunk (Megatron's
  // --recompute-method block --recompute-num-layers N); 0 = every layer.
  std::int64_t recompute_layers = 0;
  OptimizerSharding zero = OptimizerSharding::none;
  Precision precision = Precision::bf16;
  bool overlap_grad_reduce = true;   // Megatron --overlap-grad-reduce
  bool overlap_param_gather = true;  // Megatron --overlap-param-gather
  bool overlap_tp_comm = false;      // Megatron --tp-comm-overlap (opt-in, needs TE userbuffers)
  bool overlap_p2p = true;           // async send/recv between stages
  bool flash_attention = true;       // fused attention (no s x s scores in memory)
  // Send 1/tp of each activation between stages and all-gather it over NVLink (SC'21 §4.1);
  // sequence parallelism gives the same split. DeepSpeed's pipeline engine sends it whole.
  bool p2p_scatter_gather = true;
  // Uneven split (Megatron --decoder-first/last-pipeline-num-layers); 0 = Megatron's default.
  std::int64_t first_stage_layers = 0;
  std::int64_t last_stage_layers = 0;

  std::int64_t gpus() const { return saturating_product({tp, pp, dp, cp}); }
  std::int64_t microbatches(const Workload& w) const { return w.global_batch / (dp * micro_batch); }
  // Layers of a chunk of `chunk_layers` whose forward is recomputed in backward (full recompute).
  std::int64_t recomputed_layers(std::int64_t chunk_layers) const {
    if (recompute != Recompute::full) return 0;
    return recompute_layers == 0 ? chunk_layers : std::min(recompute_layers, chunk_layers);
  }
};

// Throws Error naming the field and the valid values when the plan's shape is invalid for this
// model, cluster and workload (a plan that merely does not fit in memory is valid).
// Context parallelism as Megatron-Core runs it (Transformer Engine's ring attention): it needs a
// fused attention kernel (TE asserts "Context parallelism is only implemented with Flash Attention
// and Fused Attention"), and a causal sequence is cut into 2*cp load-balanced chunks, so the
// sequence must divide by 2*cp.
constexpr bool context_parallel_supported(std::int64_t cp, std::int64_t seq_len, bool flash_attention) {
  return cp == 1 || (cp > 1 && flash_attention && seq_len % (2 * cp) == 0);
}

void validate_plan(const Plan& plan, const ModelSpec& model, const Cluster& cluster,
                   const Workload& workload);

// Megatron's split of layers over pp * vpp virtual stages: the first and last virtual stages may
// take fewer layers than the equal middle ones. Allocation-free (the cost model's hot path).
struct LayerSplit {
  std::int64_t first = 0;
  std::int64_t middle = 0;  // each of the virtual stages between the first and the last
  std::int64_t last = 0;
  std::int64_t virtual_stages = 1;
  // Layers of virtual stage k, and the index of its first layer.
  std::int64_t virtual_stage_layers(std::int64_t k) const {
    return k == 0 ? first : (k == virtual_stages - 1 ? last : middle);
  }
  std::int64_t virtual_stage_start(std::int64_t k) const { return k == 0 ? 0 : first + (k - 1) * middle; }
  // Layers on physical stage s (0-based) of pp, summed over its vpp chunks.
  std::int64_t physical_stage_layers(std::int64_t s, std::int64_t pp) const;
};
LayerSplit split_layers(const Plan& plan, std::int64_t layers);  // throws Error if impossible

// Transformer layers per virtual stage, in pipeline order (pp * vpp entries; virtual stage k runs
// on physical stage k % pp). Uneven counts go the Megatron way: middle stages equal, the first and
// last take fewer (or what first_stage_layers / last_stage_layers say).
std::vector<std::int64_t> layers_per_virtual_stage(const Plan& plan, std::int64_t layers);

}  // namespace tessera
