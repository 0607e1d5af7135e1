// Per-GPU memory of one pipeline stage: weights (with FP8 copies), gradients, optimizer state
// under sharding, in-flight activations (activation_memory.h), logits, communication buffers and
// an allocator / runtime reserve.
//
// Optimizer sharding (Plan::zero), with dense parameters sharded over dp x cp and expert
// parameters over the expert-data-parallel ranks (Plan::expert_dp()):
//   none   every rank holds 16-bit weights, fp32 gradients, fp32 master + Adam moments
//   zero1  optimizer state sharded (Megatron's distributed optimizer)
//   zero2  optimizer state and gradients sharded
//   zero3  FSDP (Megatron-FSDP / PyTorch FSDP2). Three variants, stated explicitly:
//     reshard_after_forward = true (any pp): weights sharded; each micro-batch gathers every
//       layer before its forward and again before its backward (and its recomputed forward);
//       two layers are gathered at a time (the running one and the prefetched one); gradients
//       are reduce-scattered per layer and micro-batch, so they stay sharded.
//     reshard_after_forward = false, pp = 1: a micro-batch gathers each layer once for its
//       forward and keeps it until its backward, so at the peak (the start of backward) every
//       layer of the stage is gathered; gradients reduce-scattered per micro-batch (sharded).
//     reshard_after_forward = false, pp > 1 (torchtitan's default under pipelining): weights
//       gathered once per step and kept; gradients accumulated unsharded over the micro-batches
//       and reduce-scattered once at the end of the step (FSDP2 set_requires_gradient_sync).
#pragma once

#include <cstdint>

#include "cost/activation_memory.h"
#include "cost/estimate.h"
#include "hardware/gpu_spec.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// Bytes per parameter under mixed precision with Adam (Rajbhandari et al. 2020, ZeRO §3.1;
// Megatron-LM's bf16 path keeps fp32 main gradients): 16-bit weights, fp32 gradient buffer,
// fp32 master weights + two fp32 Adam moments. PyTorch FSDP2 (torchtitan) keeps no separate
// 16-bit copy: its sharded parameter is the fp32 master (MixedPrecisionPolicy casts to bf16 only
// for the all-gather), so it holds 4 + 12 bytes per sharded parameter.
inline constexpr double kWeightBytesPerParam = 2.0;
inline constexpr double kGradBytesPerParam = 4.0;

inline constexpr double kOptimizerBytesPerParam = 12.0;

// Runtime memory outside PyTorch's caching allocator, per GPU:
// - CUDA context with lazy module loading (CUDA 12, CUDA_MODULE_LOADING=LAZY): ~0.5 GiB on Hopper
//   (CUDA C++ Programming Guide, "Lazy Loading"; PyTorch CUDA semantics notes);
// - cuBLAS / cuBLASLt and Transformer Engine workspaces: 32 MiB per stream on Hopper (cuBLAS docs,
//   "cublasSetWorkspace": 32 MiB recommended for Hopper), a few streams;
// - NCCL per communicator: NCCL_BUFFSIZE 4 MiB per channel and peer for the Simple protocol plus
//   the LL / LL128 buffers, up to 32 channels on NVLink (NCCL environment variables docs): about
//   0.25 GiB per communicator that a rank uses (tp, dp, pp send/recv, ep, cp).
inline constexpr double kCudaContextBytes = 0.5 * 1024.0 * 1024.0 * 1024.0;
inline constexpr double kWorkspaceBytes = 4 * 32.0 * 1024.0 * 1024.0;
inline constexpr double kNcclBytesPerCommunicator = 0.25 * 1024.0 * 1024.0 * 1024.0;
// PyTorch's caching allocator never compacts or returns segments during a step; transient blocks
// (activations, logits, gathered weights) freed and re-requested at other sizes leave split free
// blocks that stay reserved (PyTorch CUDA semantics, "Memory management"; pytorch#44742 on split
// blocks). Assumed reserve: 10% of the transient memory at the peak. An assumption, not a fit:
// PyTorch's expandable_segments avoids most of it.
inline constexpr double kAllocatorFragmentationFraction = 0.10;
// The former fixed reserve, still used for non-backbone modules (module_cost.cpp) until they take
// runtime_reserve_bytes + the fragmentation term.
inline constexpr double kFrameworkOverheadBytes = 2.5 * 1024.0 * 1024.0 * 1024.0;

// Parameters held by one GPU of a stage, split into those replicated over the data-parallel
// group and expert parameters (replicated over the expert-data-parallel group).
struct StageParameters {
  double dense = 0;
  double expert = 0;
  // Of the above, weights of linear layers (what FP8 GEMMs read; no norms, embeddings, LM head,
  // router). Dense and expert parts.
  double gemm_dense = 0;
  double gemm_expert = 0;
  double layers = 0;  // transformer layers the counts cover (for a per-layer ZeRO-3 buffer)
  double total() const { return dense + expert; }
};

struct StageShape {
  std::int64_t layers = 0;        // transformer layers on this GPU's stage (all chunks)
  std::int64_t moe_layers = 0;    // of which MoE
  std::int64_t recomputed_layers = -1;  // under recompute=full, how many are recomputed; -1 = all
  bool has_embedding = false;
  bool has_output_head = false;   // also holds the model's MTP modules (Megatron-Core's default)
  double inflight_microbatches = 0;  // micro-batches whose activations are held at the peak
  // Which stack runs the plan (Plan::framework; activation_memory.h, eager_pytorch_memory.h).
  TrainingFramework framework = TrainingFramework::megatron;
};

StageParameters stage_parameters(const ModelSpec& model, const Plan& plan, const StageShape& stage);

// The parameters of a stage (one GPU's share) that are trained, so carry gradients and optimizer
// state: all of them, or under LoRA / QLoRA only the adapters (cost/adapter_parameters.h; none on
// routed experts). Split like StageParameters: over dp x cp (dense) and expert-dp (expert).
struct TrainableState {
  double dense = 0;
  double expert = 0;
  double all() const { return dense + expert; }
};
TrainableState trainable_state(const ModelSpec& model, const Plan& plan, const StageShape& stage,
                               const StageParameters& params);

// Activations one micro-batch leaves saved on the stage for its backward (layers, MTP modules).
double activation_bytes_per_microbatch(const ModelSpec& model, const Plan& plan, const Workload& workload,
                                       const StageShape& stage);

// `gpu` contributes only its memory_reserve_gib (measured_reserve_bytes), added to framework_bytes.
MemoryBreakdown stage_memory(const ModelSpec& model, const Plan& plan, const Workload& workload,
                             const StageShape& stage, const GpuSpec& gpu);

// The runtime reserve outside the caching allocator (CUDA context, workspaces, NCCL) for a plan.
double runtime_reserve_bytes(const Plan& plan);

// A calibration profile's correction to the modelled reserve: GpuSpec::memory_reserve_gib in
// bytes, what measured peaks on this GPU type hold beyond the model's (may be negative, down to
// physical::kMaxNegativeReserveGib, which cannot exceed the CUDA context + workspaces above).
double measured_reserve_bytes(const GpuSpec& gpu);

}  // namespace tessera
