#include "cost/layer_cost.h"

#include "hardware/physical_ranges.h"

#include <algorithm>

#include "cost/adapter_cost.h"
#include "cost/compute_cost.h"
#include "cost/eager_kernels.h"
#include "cost/ep_overlap.h"
#include "cost/layer_streaming.h"
#include "cost/moe_layer_cost.h"
#include "core/units.h"
#include "model/parameter_count.h"

namespace tessera {

namespace {

// Memory-bound passes per layer and token, in h-sized 16-bit tensors read or written, outside
// the tensor-parallel region: two norms (read + write each), two bias-dropout-residual adds
// (read 2, write 1, mask) -- split by tp only with sequence parallelism.
constexpr double kReplicatedElementwisePasses = 11.0;
// Of those, the two norms (what --recompute-modules layernorm re-runs).
constexpr double kNormPasses = 4.0;
// Elementwise backward reads the saved input and the output gradient, writes the input gradient.
constexpr double kElementwiseBackwardOverForward = 2.0;
// Non-fused attention: scores written, softmax read + written, dropout read + written + mask,
// in 16-bit elements of the s x s matrix per head (Korthikanti §4.1 accounting).
constexpr double kUnfusedSoftmaxBytesPerScore = 11.0;
// FP8 GEMMs cast their 16-bit inputs: read 2 bytes, write 1 (Transformer Engine current scaling),
// and the transposed copy the weight-gradient GEMM reads (TE's fused cast-transpose): 1 more.
// Weights are cast once per step.
constexpr double kFp8CastBytesPerElement = 4.0;
// Block-wise and MX scaling write per-block scales and compute the amax in the cast kernel.
constexpr double kBlockScaledExtraBytesPerElement = 2.0;
// Elementwise/normalisation kernels per layer forward (norms, bias-dropout-add, activation,
// rope); backward launches about twice as many.
constexpr double kElementwiseKernelsPerLayer = 8.0;
// Of a layer's host operators, the share issued before the MoE router's routing counts are known
// (the attention block and the router): the rest waits for the host sync.
constexpr double kHostOpsBeforeRouting = 0.5;

// Attention projections' forward time, and the part that MLA's up-projections take.
struct ProjectionTimes {
  double total_s = 0;
  double up_projection_s = 0;  // MLA q / kv up-projections (--recompute-modules mla_up_proj)
};

double linear_time(const LayerContext& x, double m, double n, double k, double count = 1.0) {
  return gemm_time_s(m, n, k, count, x.c.gpu, x.fp8);
}

// Multi-head latent attention (DeepSeek-V3 §2.1.1): the down-projections of q and of the joint
// kv latent (+ the shared rope key) are replicated over tp ("duplicated" in Megatron-Core's
// multi_latent_attention.py, d98e8a64) and run on the gathered sequence; the up-projections and
// the output projection are split by tp.
ProjectionTimes mla_projections(const LayerContext& x, double tokens) {
  const MlaSpec& l = x.m.mla;
  const double h = static_cast<double>(x.m.hidden);
  const double heads = static_cast<double>(x.m.heads) / x.tp;
  const double qk_head = static_cast<double>(l.qk_nope_head_dim + l.qk_rope_head_dim);
  ProjectionTimes t;
  double q_up = 0;
  double q_down = 0;
  if (l.q_lora_rank > 0) {
    q_down = linear_time(x, tokens, static_cast<double>(l.q_lora_rank), h);
    q_up = linear_time(x, tokens, heads * qk_head, static_cast<double>(l.q_lora_rank));
  } else {
    q_down = linear_time(x, tokens, heads * qk_head, h);
  }
  const double kv_down = linear_time(x, tokens, static_cast<double>(l.kv_lora_rank + l.qk_rope_head_dim), h);
  const double kv_up = linear_time(x, tokens, heads * static_cast<double>(l.qk_nope_head_dim + l.v_head_dim),
                                   static_cast<double>(l.kv_lora_rank));
  const double out = linear_time(x, tokens, h, heads * static_cast<double>(l.v_head_dim));
  t.up_projection_s = q_up + kv_up;
  t.total_s = q_down + kv_down + t.up_projection_s + out;
  return t;
}

ProjectionTimes attention_projections(const LayerContext& x, double q_width, double kv_width) {
  if (x.m.attention == AttentionKind::mla) return mla_projections(x, x.tokens);
  const double h = static_cast<double>(x.m.hidden);
  return {linear_time(x, x.tokens, (q_width + 2.0 * kv_width) / x.tp, h) + linear_time(x, x.tokens, h, q_width / x.tp), 0.0};
}

// The attention core (scores and values) over the causal span, forward and backward.
struct AttentionCoreTimes {
  double fwd_s = 0, bwd_s = 0;
};

AttentionCoreTimes attention_core(const LayerContext& x, double qk_dim, double v_dim) {
  const ModelSpec& m = x.m;
  if (x.p.flash_attention) {
    const auto per_token = forward_flops_per_token(m, x.seq_len, /*causal_span=*/x.causal);
    const double flops = x.tokens * per_token.attention_core / static_cast<double>(m.layers) / x.tp;
    // One kernel call per micro-batch: its heads on this rank, over the rank's context shard.
    const double micro_batch = x.tokens / (static_cast<double>(x.seq_len) / static_cast<double>(x.p.cp));
    const AttentionCall call{micro_batch * static_cast<double>(m.heads) / x.tp,
                             static_cast<double>(x.seq_len) / static_cast<double>(x.p.cp), (qk_dim + v_dim) / 2.0};
    const double fwd = attention_time_s(flops, call, x.c.gpu);
    return {fwd, kFlashBackwardOverForward * fwd};
  }
  // Unfused: the full s x s matrix as batched GEMMs plus softmax/dropout traffic.
  const double seq = static_cast<double>(x.seq_len);
  const double heads = static_cast<double>(m.heads) / x.tp;
  const double flops_gemm = 2.0 * x.tokens * seq * heads * (qk_dim + v_dim);
  const double softmax_bytes = kUnfusedSoftmaxBytesPerScore * x.tokens * seq * heads;
  const double fwd = flops_gemm / (x.c.gpu.peak_flops(false) * gemm_efficiency(seq, seq, qk_dim, x.c.gpu, false)) +
                     memory_bound_time_s(softmax_bytes, x.c.gpu);
  return {fwd, kGemmBackwardOverForward * fwd};
}

// A dense MLP's forward GEMMs over the layer's tokens, split by tp.
double dense_mlp_gemms(const LayerContext& x) {
  const double h = static_cast<double>(x.m.hidden);
  const double f = static_cast<double>(x.m.ffn_hidden);
  const double gate = x.m.mlp == MlpType::swiglu ? 2.0 : 1.0;
  return linear_time(x, x.tokens, gate * f / x.tp, h) + linear_time(x, x.tokens, h, f / x.tp);
}


// Tensor parallel: all-reduces (or all-gather + reduce-scatter with SP) around each TP-split
// block, forward and backward, and again when the forward is recomputed (Megatron-LM, SC'21 §3.2
// / Korthikanti §4.2.2). An MoE layer's routed experts stay on the sequence shard (the
// dispatcher moves the tokens), so only its attention and shared experts pay them.
double tensor_parallel_time(const LayerContext& x, bool moe, Recompute recompute, double gemm_fwd_s) {
  if (x.p.tp <= 1) return 0.0;
  const double one = all_reduce_time_s(units::kBytesBf16 * x.tokens * static_cast<double>(x.m.hidden), x.p.tp, x.tp_link);
  const double blocks = moe && x.m.moe.shared_experts == 0 ? 1.0 : 2.0;
  const double passes = recompute == Recompute::full ? 3.0 : 2.0;
  const double t = blocks * passes * one;
  if (!x.p.overlap_tp_comm || !x.p.sequence_parallel) return t;
  // --tp-comm-overlap (Transformer Engine userbuffers; Megatron-LM d98e8a64 arguments.py asserts
  // sequence parallelism, model_parallel_config.py tp_comm_overlap_ag / _rs / bulk_wgrad /
  // bulk_dgrad): forward, the sequence-parallel all-gather is pipelined chunk by chunk with the
  // QKV / fc1 GEMMs it feeds and the reduce-scatter with the proj / fc2 GEMMs that produce it;
  // backward, the all-gather runs under the dgrad GEMM and the reduce-scatter under the wgrad
  // GEMM. The GEMMs hide the collectives up to their own time (forward, its recompute, 2x
  // backward); one ring step of tp (the first all-gather chunk, the last reduce-scatter chunk)
  // has no GEMM beside it and stays exposed.
  const double hiding_s = gemm_fwd_s * (1.0 + kGemmBackwardOverForward + (recompute == Recompute::full ? 1.0 : 0.0));
  return std::max(t - hiding_s, t / static_cast<double>(x.p.tp));
}

// Context parallel: ring exchange of K and V, overlapped with the attention of each step
// (Megatron-Core context parallelism; backward also returns dK and dV).
double context_parallel_time(const LayerContext& x, double kv_width, const AttentionCoreTimes& core,
                             Recompute recompute) {
  if (x.p.cp <= 1) return 0.0;
  const double kv_bytes = units::kBytesBf16 * x.tokens * 2.0 * kv_width / x.tp;
  const double ring_fwd = static_cast<double>(x.p.cp - 1) * p2p_time_s(kv_bytes, x.cp_link);
  double t = std::max(0.0, ring_fwd - core.fwd_s) + std::max(0.0, 2.0 * ring_fwd - core.bwd_s);
  if (recompute == Recompute::full) t += std::max(0.0, ring_fwd - core.fwd_s);
  return t;
}

}  // namespace

double fp8_cast_bytes_per_element(Fp8Recipe recipe) {
  const bool block_scaled = recipe == Fp8Recipe::blockwise || recipe == Fp8Recipe::mxfp8;
  return kFp8CastBytesPerElement + (block_scaled ? kBlockScaledExtraBytesPerElement : 0.0);
}

LayerContext make_layer_context(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                                std::int64_t seq_len, double tokens, bool causal) {
  LayerContext x{model, cluster, plan, seq_len, causal, plan.precision == Precision::fp8, tokens,
                 static_cast<double>(plan.tp), {}, {}};
  x.tp_link = group_link(cluster, 1, plan.tp);
  x.cp_link = group_link(cluster, plan.tp, plan.cp);
  return x;
}

namespace {

// What the recomputation of one layer re-runs: its forward's parts.
struct ForwardParts {
  double layer_s = 0;          // the whole forward, dispatch included
  double core_attention_s = 0;
  double up_projection_s = 0;  // MLA's
  double norm_s = 0;
  double mlp_s = 0;            // the dense MLP's GEMMs and activation (only when it is recomputed)
  double expert_comm_s = 0;    // the MoE block's dispatch and combine
};
struct RecomputeTime {
  double recompute_s = 0;
  double comm_s = 0;  // expert communication run again
};

// Full recompute re-runs the forward (dispatch included); selective re-runs the modules named.
RecomputeTime recompute_time(Recompute recompute, unsigned modules, bool moe, const ForwardParts& f,
                             const MoeBlockCost& block) {
  RecomputeTime r;
  switch (recompute) {
    case Recompute::none: break;
    case Recompute::full:
      r.recompute_s = f.layer_s;
      r.comm_s = f.expert_comm_s;
      break;
    case Recompute::selective:
      if (modules & kRecomputeCoreAttn) r.recompute_s += f.core_attention_s;
      if (modules & kRecomputeMlaUpProj) r.recompute_s += f.up_projection_s;
      if (modules & kRecomputeLayernorm) r.recompute_s += f.norm_s;
      if (moe && (modules & kRecomputeMoeAct)) r.recompute_s += block.expert_act_s;
      if (!moe && (modules & kRecomputeMlp)) r.recompute_s += f.mlp_s;
      if (moe && (modules & kRecomputeSharedExperts)) r.recompute_s += block.shared_gemm_s;
      if (moe && (modules & kRecomputeMoe)) {
        r.recompute_s += block.compute_s() - ((modules & kRecomputeSharedExperts) ? block.shared_gemm_s : 0.0);
        r.comm_s = f.expert_comm_s;
      }
      break;
  }
  return r;
}

}  // namespace

LayerCost layer_cost(const LayerContext& x, bool moe, Recompute recompute) {
  const ModelSpec& m = x.m;
  const Plan& p = x.p;
  const double T = x.tokens;
  const double h = static_cast<double>(m.hidden);
  const double t = x.tp;
  LayerCost cost;

  double q_width = static_cast<double>(m.heads) * m.head_dim;
  double kv_width = static_cast<double>(m.kv_heads) * m.head_dim;
  double qk_dim = static_cast<double>(m.head_dim), v_dim = qk_dim;
  if (m.attention == AttentionKind::mla) {
    qk_dim = static_cast<double>(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim);
    v_dim = static_cast<double>(m.mla.v_head_dim);
    q_width = kv_width = static_cast<double>(m.heads) * qk_dim;
  }
  const ProjectionTimes projections = attention_projections(x, q_width, kv_width);
  const AttentionCoreTimes core = attention_core(x, qk_dim, v_dim);
  const MoeBlockCost block = moe ? moe_block_cost(x) : MoeBlockCost{};
  const double mlp_gemm_fwd = moe ? 0.0 : dense_mlp_gemms(x);
  const double gemm_fwd = projections.total_s + mlp_gemm_fwd;

  // Memory-bound elementwise work (the MoE block's activation and permutation are its own).
  const double sp_divisor = p.sequence_parallel ? t : 1.0;
  const double act_width = moe ? 0.0 : static_cast<double>(m.ffn_hidden) / t;
  const double act_passes = m.mlp == MlpType::swiglu ? 3.0 : 2.0;
  const double rope_passes = m.position == PositionEmbedding::rope ? 2.0 * (q_width + kv_width) / t : 0.0;
  const double qk_norm_passes = m.qk_norm ? 2.0 * (q_width + kv_width) / t : 0.0;
  const double norm_fwd = memory_bound_time_s(units::kBytesBf16 * T * kNormPasses * h / sp_divisor, x.c.gpu);
  double elementwise_bytes_fwd =
      units::kBytesBf16 * T * (kReplicatedElementwisePasses * h / sp_divisor + act_passes * act_width + rope_passes + qk_norm_passes);
  if (x.fp8) {
    // Inputs of the projection and dense MLP GEMMs are cast forward. Backward, Transformer Engine
    // fuses each output gradient's cast-transpose into the kernel that produces it (its
    // dbias / dact cast-transpose kernels), so it adds no pass of its own here.
    const double cast = fp8_cast_bytes_per_element(p.fp8_recipe);
    elementwise_bytes_fwd += cast * T * (2.0 * h / sp_divisor + q_width / t + act_width);
  }
  double elementwise_fwd = memory_bound_time_s(elementwise_bytes_fwd, x.c.gpu) +
                           kElementwiseKernelsPerLayer * x.c.gpu.kernel_overhead_s;
  double elementwise_bwd = kElementwiseBackwardOverForward * elementwise_fwd;
  if (p.framework == TrainingFramework::pytorch || p.framework == TrainingFramework::megatrain) {
    // Eager PyTorch: every elementwise op its own kernel (cost/eager_kernels.h), and autocast's
    // bf16 copy of each fp32 weight per forward (again when recomputed), its gradient cast back.
    // Under PEFT the base is bf16 or NF4 (never cast); QLoRA's dequantization is adapter.dequant_s.
    // MegaTrain runs the same Hugging Face layers eagerly on bf16 weights: nothing to cast.
    const bool casts = p.framework == TrainingFramework::pytorch && !p.tuning.adapters();
    const double params = casts ? eager_layer_cast_params(m, moe) : 0.0;
    elementwise_fwd = memory_bound_time_s(T * eager_layer_forward_bytes_per_token(m) + kEagerWeightCastBytesPerParam * params, x.c.gpu) +
                      kEagerKernelsPerLayerForward * x.c.gpu.kernel_overhead_s;
    elementwise_bwd = memory_bound_time_s(T * eager_layer_backward_bytes_per_token(m) + kEagerGradCastBytesPerParam * params, x.c.gpu) +
                      kEagerKernelsPerLayerBackward * x.c.gpu.kernel_overhead_s;
  }

  // GPU work, forward and backward; the MoE block's backward is twice its GEMMs and casts, once
  // its router and permutation.
  // Frozen weights (LoRA / QLoRA) have no weight-gradient GEMM (cost/adapter_cost.h).
  const double gemm_bwd = p.tuning.adapters() ? kFrozenGemmBackwardOverForward : kGemmBackwardOverForward;
  const AdapterLayerCost adapter = adapter_layer_cost(x, moe);
  const double moe_bwd = gemm_bwd * (block.expert_gemm_s + block.shared_gemm_s + block.fp8_cast_s) +
                         kElementwiseBackwardOverForward * block.expert_act_s + block.router_s + block.permute_s;
  cost.gpu_fwd_s = gemm_fwd + core.fwd_s + elementwise_fwd + block.compute_s() + adapter.fwd_s + adapter.dequant_s;
  cost.gpu_bwd_s = gemm_bwd * gemm_fwd + core.bwd_s + elementwise_bwd + moe_bwd + adapter.bwd_s + adapter.dequant_s;

  // Host dispatch. The GPU runs behind the host unless its work is shorter than the host's
  // dispatch; an MoE layer's forward waits on the host for the routing counts, so its two halves
  // each take the longer of the GPU's and the host's time (the host cannot run ahead past it).
  const double host_op_s = x.c.gpu.host_op_dispatch_s;
  const double host_fwd = (kHostOpsPerLayerForward + block.host_ops + adapter.host_ops) * host_op_s;
  cost.host_fwd_s = host_fwd;
  cost.host_bwd_s = kHostBackwardOverForward * host_fwd;
  const double ep_fwd = block.comm_s();
  if (block.host_sync) {
    const double gpu_before = projections.total_s + core.fwd_s + elementwise_fwd + block.router_s;
    const double host_before = kHostOpsBeforeRouting * kHostOpsPerLayerForward * host_op_s +
                               block.host_ops * host_op_s * kHostOpsBeforeRouting;
    const double gpu_after = cost.gpu_fwd_s - gpu_before + ep_fwd;
    const double with_comm = std::max(gpu_before, host_before) + std::max(gpu_after, host_fwd - host_before);
    cost.fwd_s = std::max(cost.gpu_fwd_s, with_comm - ep_fwd);
  } else {
    // Communication runs on the GPU's streams while the host keeps issuing work.
    cost.fwd_s = host_bound_time_s(cost.gpu_fwd_s, host_fwd - ep_fwd, x.c.gpu.host_overlap_exponent);
  }
  // An MoE layer that syncs with the host for its routing counts (block.host_sync) drains the
  // GPU's queue at that point each pass, so its halves are bound by the plain maximum; the smooth
  // maximum is for layers the host issues without waiting.
  cost.bwd_s = block.host_sync ? std::max(cost.gpu_bwd_s, cost.host_bwd_s - ep_fwd)
                               : host_bound_time_s(cost.gpu_bwd_s, cost.host_bwd_s - ep_fwd,
                                                   x.c.gpu.host_overlap_exponent);

  const unsigned modules = recompute == Recompute::selective ? p.selective_modules() : 0u;
  const bool mlp_recomputed = !moe && (modules & kRecomputeMlp);
  const ForwardParts parts{cost.fwd_s, core.fwd_s, projections.up_projection_s, norm_fwd,
                           mlp_recomputed ? mlp_gemm_fwd + memory_bound_time_s(units::kBytesBf16 * T * act_passes * act_width, x.c.gpu) : 0.0,
                           ep_fwd};
  const RecomputeTime again = recompute_time(recompute, modules, moe, parts, block);
  // MegaTrain re-runs each layer's forward twice in backward (cost/layer_streaming.h).
  const double passes = p.framework == TrainingFramework::megatrain ? kMegatrainForwardPasses - 1.0 : 1.0;
  cost.recompute_s = passes * again.recompute_s;
  const double recompute_comm = again.comm_s;

  // The shared experts' GEMMs run inside the TP region too (the routed experts do not).
  cost.tp_s = tensor_parallel_time(x, moe, recompute, gemm_fwd + block.shared_gemm_s);
  cost.cp_s = context_parallel_time(x, kv_width, core, recompute);
  if (moe) {
    // Dispatch and combine forward, their reverses backward (and again when recomputed). With
    // --overlap-moe-expert-parallel-comm another micro-batch's backward runs beside this one's
    // forward, each all-to-all under one named piece of the other's compute (cost/ep_overlap.h).
    cost.ep_total_s = 2.0 * ep_fwd + recompute_comm;
    const double one_way = 0.5 * ep_fwd;  // a dispatch, or a combine: the same route back
    const double mlp_fwd = block.compute_s() - block.router_s;
    const double mlp_bwd = moe_bwd - block.router_s;
    const PairedLayerWork paired{cost.gpu_fwd_s - mlp_fwd, mlp_fwd, cost.gpu_bwd_s - mlp_bwd, mlp_bwd, one_way, one_way};
    cost.ep_s = p.overlap_ep ? ep_overlap_exposed_s(paired) : cost.ep_total_s;
  }
  cost.comm_s = cost.tp_s + cost.cp_s + cost.ep_s;
  return cost;
}

}  // namespace tessera
