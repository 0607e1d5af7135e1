// Per-GPU memory of one pipeline stage: weights, gradients, optimizer state under sharding
// (ZeRO-3 with pp > 1 keeps a stage's weights gathered and its gradients unsharded for the whole
// step, as FSDP2 does under pipelining),
// in-flight activations (activation_memory.h), logits, buffers and a framework reserve.
#pragma once

#include <cstdint>

#include "cost/estimate.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// Bytes per parameter under mixed precision with Adam (Rajbhandari et al. 2020, ZeRO §3.1;
// Megatron-LM's bf16 path keeps fp32 main gradients): 16-bit weights, fp32 gradient buffer,
// fp32 master weights + two fp32 Adam moments.
inline constexpr double kWeightBytesPerParam = 2.0;
inline constexpr double kGradBytesPerParam = 4.0;
inline constexpr double kOptimizerBytesPerParam = 12.0;
// CUDA context, cuBLAS/cuDNN workspaces, NCCL communicator buffers and allocator reserve. A
// documented assumption: ~1 GiB CUDA context and workspaces, ~1 GiB NCCL buffers for a few
// communicators, ~0.5 GiB caching-allocator slack (PyTorch CUDA semantics notes; NCCL env docs).
inline constexpr double kFrameworkOverheadBytes = 2.5 * 1024.0 * 1024.0 * 1024.0;

// Parameters held by one GPU of a stage, split into those replicated over the data-parallel
// group and expert parameters (replicated over the expert-data-parallel group).
struct StageParameters {
  double dense = 0;
  double expert = 0;
  double total() const { return dense + expert; }
};

struct StageShape {
  std::int64_t layers = 0;        // transformer layers on this GPU's stage (all chunks)
  std::int64_t moe_layers = 0;    // of which MoE
  std::int64_t recomputed_layers = -1;  // under recompute=full, how many are recomputed; -1 = all
  bool has_embedding = false;
  bool has_output_head = false;
  double inflight_microbatches = 0;  // micro-batches whose activations are held at the peak
};

StageParameters stage_parameters(const ModelSpec& model, const Plan& plan, const StageShape& stage);

MemoryBreakdown stage_memory(const ModelSpec& model, const Plan& plan, const Workload& workload,
                             const StageShape& stage);

}  // namespace tessera
