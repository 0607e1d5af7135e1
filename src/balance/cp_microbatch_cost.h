// The predicted training time of one micro-batch (a packed sequence of causal documents) run by a
// context-parallel group of c GPUs, and the fewest GPUs its tokens need.
//
//   time(c) = max(gpu(c), host(c))
//   gpu(c)  = slowest cp rank's compute, the better of the two Megatron / Transformer Engine splits
//             (balance/context_parallel_sharding.h: per sequence, the packed sequence padded to a
//             multiple of 2c; per document, THD format, every document padded to a multiple of 2c;
//             pad tokens are computed like real ones), with GEMM efficiency at the rank's tokens
//             (cost/compute_cost.h: small shards run slower GEMMs)
//           + ring attention's exposed KV exchange: c - 1 steps of one rank's K and V per layer,
//             overlapped with that layer's attention (forward; backward sends K, V and returns dK,
//             dV: twice the bytes), as cost/layer_cost.cpp's context_parallel_time
//           + kernel launches of the c - 1 extra ring steps
//   host(c) = eager dispatch of the layer's operators plus each ring step's (cost/compute_cost.h)
// Degree rule: Megatron / TE ring attention needs seq % (2 cp) == 0 (plan/plan.h's
// context_parallel_supported); here every degree is allowed and the micro-batch is padded up to it,
// the way NeMo / Megatron pad packed sequences for cp, so a degree is never refused, only charged.
// Memory: a micro-batch of T tokens needs c >= ceil(T / max_tokens_per_gpu), the cap taken from the
// memory model (cost/memory_model.h) for the plan's model, GPU count and recompute.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "balance/sample_cost.h"
#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// Operators one ring step adds per layer and pass: the attention kernel on the received block,
// the send / receive pair and the softmax-statistics correction (Transformer Engine's
// AttnFuncWithCPAndKVP2P issues them once per step).
inline constexpr double kRingStepHostOps = 4.0;
// Kernels one ring step adds per layer and pass: the partial attention and the output correction.
inline constexpr double kRingStepKernels = 2.0;
// Backward over forward bytes of the ring: K and V go round again and dK, dV come back.
inline constexpr double kRingBackwardOverForward = 2.0;
// Bytes per element of K and V (bf16).
inline constexpr double kKvBytesPerElement = 2.0;

struct CpCostModel {
  SpanCost reference;                 // the backbone's span cost at reference_tokens per GPU
  std::int64_t reference_tokens = 0;  // GEMM M at which `reference` was taken
  Cluster cluster;                    // its GPU, and the links of a cp group (cost/collective_cost.h group_link)
  std::int64_t hidden = 0;            // GEMM width (cost/compute_cost.h gemm_efficiency)
  std::int64_t layers = 0;
  double kv_bytes_per_token_layer = 0;    // K and V of one token in one layer
  Recompute recompute = Recompute::full;  // what the backward re-runs (also sets the memory cap)
  std::int64_t max_tokens_per_gpu = 0;    // memory cap

  // The span cost with GEMM efficiency at `tokens_per_gpu` rows.
  SpanCost span_cost(double tokens_per_gpu) const;
  // The fewest GPUs that hold `tokens` (>= 1).
  int min_degree(std::int64_t tokens) const;
};

// Built from the plan's model, cluster, GPUs of a stage (dp x cp) and recompute (none, selective or
// full). The memory cap is the largest tokens per GPU whose stage memory (ZeRO-1 over all `gpus`,
// one micro-batch in flight, tp = pp = 1) fits the GPU's usable memory. Throws Error("gpus", ...)
// when not even kMinCapTokens fit.
CpCostModel make_cp_cost_model(const ModelSpec& model, const Cluster& cluster, std::int64_t gpus, Recompute recompute);
// The cap alone (the binary search on stage_memory), exposed for tests.
std::int64_t max_tokens_per_gpu(const ModelSpec& model, const GpuSpec& gpu, std::int64_t gpus, Recompute recompute);

inline constexpr std::int64_t kMinCapTokens = 128;  // one attention tile (kAttentionQueryTileRows)

struct CpMicrobatchTime {
  double compute_s = 0;       // slowest rank, GEMMs + attention (+ recompute)
  double exposed_ring_s = 0;  // KV exchange not hidden behind attention
  double launch_s = 0;        // ring steps' extra kernels
  double host_s = 0;          // eager dispatch
  double total_s = 0;         // max(compute + ring + launch, host)
};

// Scratch a caller keeps between calls so that costing allocates nothing once it has grown.
struct CpCostScratch {
  std::vector<double> rank_s;
  std::vector<std::int64_t> padded;
};

// Time of `documents` (token counts, packed back to back) at degree `cp` >= 1.
CpMicrobatchTime cp_microbatch_time(const CpCostModel& model, std::span<const std::int64_t> documents, int cp,
                                    CpCostScratch& scratch);

}  // namespace tessera
