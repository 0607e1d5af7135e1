#include "cost/layer_cost.h"

#include <algorithm>

#include "cost/compute_cost.h"
#include "core/units.h"
#include "model/parameter_count.h"

namespace tessera {

namespace {

constexpr double kB16 = units::kBytesBf16;
// Flash-attention backward runs five matmuls against the forward's two (Dao 2023, FA2 §3.1.2).
constexpr double kFlashBackwardOverForward = 2.5;
// Backward of a linear layer: input-gradient and weight-gradient GEMMs of the forward's shape.
constexpr double kGemmBackwardOverForward = 2.0;
// Memory-bound passes per layer and token, in h-sized 16-bit tensors read or written, outside
// the tensor-parallel region: two norms (read + write each), two bias-dropout-residual adds
// (read 2, write 1, mask) -- split by tp only with sequence parallelism.
constexpr double kReplicatedElementwisePasses = 11.0;
// Elementwise backward reads the saved input and the output gradient, writes the input gradient.
constexpr double kElementwiseBackwardOverForward = 2.0;
// Non-fused attention: scores written, softmax read + written, dropout read + written + mask,
// in 16-bit elements of the s x s matrix per head (Korthikanti §4.1 accounting).
constexpr double kUnfusedSoftmaxBytesPerScore = 11.0;
// FP8 GEMMs cast their 16-bit inputs: read 2 bytes, write 1 (Transformer Engine current scaling).
constexpr double kFp8CastBytesPerElement = 3.0;
// Elementwise/normalisation kernels per layer forward (norms, bias-dropout-add, activation,
// rope); backward launches about twice as many.
constexpr double kElementwiseKernelsPerLayer = 8.0;

}  // namespace

LayerContext make_layer_context(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                                std::int64_t seq_len, double tokens, bool causal) {
  LayerContext x{model, cluster, plan, seq_len, causal, plan.precision == Precision::fp8, tokens,
                 static_cast<double>(plan.tp), {}, {}, {}};
  x.tp_link = group_link(cluster, 1, plan.tp);
  x.cp_link = group_link(cluster, plan.tp, plan.cp);
  x.ep_link = group_link(cluster, plan.tp, plan.ep);
  return x;
}

namespace {

double linear_time(const LayerContext& x, double m, double n, double k, double count = 1.0) {
  return gemm_time_s(m, n, k, count, x.c.gpu, x.fp8);
}

}  // namespace

LayerCost layer_cost(const LayerContext& x, bool moe, Recompute recompute) {
  const ModelSpec& m = x.m;
  const double T = x.tokens;
  const double h = static_cast<double>(m.hidden);
  const double t = x.tp;
  LayerCost cost;

  // Attention projections.
  double attn_gemm_fwd;
  double q_width = static_cast<double>(m.heads) * m.head_dim;
  double kv_width = static_cast<double>(m.kv_heads) * m.head_dim;
  double qk_dim = static_cast<double>(m.head_dim), v_dim = qk_dim;
  if (m.attention == AttentionKind::mla) {
    const double weights = dense_layer_gemm_weights(m).attention;
    attn_gemm_fwd = linear_time(x, T, weights / (h * t), h);
    qk_dim = static_cast<double>(m.mla.qk_nope_head_dim + m.mla.qk_rope_head_dim);
    v_dim = static_cast<double>(m.mla.v_head_dim);
    q_width = kv_width = static_cast<double>(m.heads) * qk_dim;
  } else {
    attn_gemm_fwd = linear_time(x, T, (q_width + 2.0 * kv_width) / t, h) + linear_time(x, T, h, q_width / t);
  }

  // MLP.
  const double gate_factor = m.mlp == MlpType::swiglu ? 2.0 : 1.0;
  double mlp_gemm_fwd = 0;
  double act_width = 0;  // MLP activation elements per token on this GPU
  if (moe) {
    const double f = static_cast<double>(m.moe.expert_ffn_hidden);
    const double experts = static_cast<double>(m.moe.experts);
    const double ep = static_cast<double>(x.p.ep);
    const double local_experts = experts / ep;
    const double tokens_per_expert = T * static_cast<double>(m.moe.top_k) * ep / experts;
    mlp_gemm_fwd = linear_time(x, T, experts, h) +
                   linear_time(x, tokens_per_expert, gate_factor * f / t, h, local_experts) +
                   linear_time(x, tokens_per_expert, h, f / t, local_experts);
    if (m.moe.shared_experts > 0) {
      const double fs = f * static_cast<double>(m.moe.shared_experts);
      mlp_gemm_fwd += linear_time(x, T, gate_factor * fs / t, h) + linear_time(x, T, h, fs / t);
    }
    act_width = f * static_cast<double>(m.moe.top_k + m.moe.shared_experts) / t;
  } else {
    const double f = static_cast<double>(m.ffn_hidden);
    mlp_gemm_fwd = linear_time(x, T, gate_factor * f / t, h) + linear_time(x, T, h, f / t);
    act_width = f / t;
  }
  const double gemm_fwd = attn_gemm_fwd + mlp_gemm_fwd;

  // Attention core (scores and values) over the causal span.
  const double seq = static_cast<double>(x.seq_len);
  const double heads = static_cast<double>(m.heads) / t;
  double attn_fwd, attn_bwd;
  if (x.p.flash_attention) {
    const auto per_token = forward_flops_per_token(m, x.seq_len, /*causal_span=*/x.causal);
    const double flops = T * per_token.attention_core / static_cast<double>(m.layers) / t;
    attn_fwd = attention_time_s(flops, x.c.gpu);
    attn_bwd = kFlashBackwardOverForward * attn_fwd;
  } else {
    // Unfused: the full s x s matrix as batched GEMMs plus softmax/dropout traffic.
    const double flops_gemm = 2.0 * T * seq * heads * (qk_dim + v_dim);
    const double softmax_bytes = kUnfusedSoftmaxBytesPerScore * T * seq * heads;
    attn_fwd = flops_gemm / (x.c.gpu.peak_flops(false) * gemm_efficiency(seq, seq, qk_dim, x.c.gpu, false)) +
               memory_bound_time_s(softmax_bytes, x.c.gpu);
    attn_bwd = kGemmBackwardOverForward * attn_fwd;
  }

  // Memory-bound elementwise work.
  const double sp_divisor = x.p.sequence_parallel ? t : 1.0;
  const double act_passes = m.mlp == MlpType::swiglu ? 3.0 : 2.0;
  const double rope_passes = m.position == PositionEmbedding::rope ? 2.0 * (q_width + kv_width) / t : 0.0;
  double elementwise_bytes_fwd =
      kB16 * T * (kReplicatedElementwisePasses * h / sp_divisor + act_passes * act_width + rope_passes);
  if (x.fp8) {
    // Inputs of the four projection GEMMs are cast to FP8 (weights are cached across micro-batches).
    elementwise_bytes_fwd += kFp8CastBytesPerElement * T * (2.0 * h / sp_divisor + q_width / t + act_width);
  }
  const double elementwise_fwd = memory_bound_time_s(elementwise_bytes_fwd, x.c.gpu) +
                                 kElementwiseKernelsPerLayer * kKernelOverheadS;
  const double elementwise_bwd = kElementwiseBackwardOverForward * elementwise_fwd;

  // The GPU runs behind the host unless its work is shorter than the host's dispatch.
  const double host_fwd = kHostOpsPerLayerForward * kHostOpDispatchS;
  cost.gpu_fwd_s = gemm_fwd + attn_fwd + elementwise_fwd;
  cost.gpu_bwd_s = kGemmBackwardOverForward * gemm_fwd + attn_bwd + elementwise_bwd;
  cost.host_fwd_s = host_fwd;
  cost.host_bwd_s = kHostBackwardOverForward * host_fwd;
  cost.fwd_s = std::max(gemm_fwd + attn_fwd + elementwise_fwd, host_fwd);
  cost.bwd_s = std::max(kGemmBackwardOverForward * gemm_fwd + attn_bwd + elementwise_bwd,
                        kHostBackwardOverForward * host_fwd);
  switch (recompute) {
    case Recompute::none: break;
    case Recompute::selective: cost.recompute_s = attn_fwd; break;
    case Recompute::full: cost.recompute_s = cost.fwd_s; break;
  }

  // Tensor parallel: two all-reduces (or all-gather + reduce-scatter with SP) forward, two in
  // backward, two more when the forward is recomputed (Megatron-LM, SC'21 §3.2 / Korthikanti §4.2.2).
  if (x.p.tp > 1) {
    const double one = all_reduce_time_s(kB16 * T * h, x.p.tp, x.tp_link);
    const double count = recompute == Recompute::full ? 6.0 : 4.0;
    double tp_comm = count * one;
    if (x.p.overlap_tp_comm) tp_comm = std::max(0.0, tp_comm - (gemm_fwd * (1.0 + kGemmBackwardOverForward)));
    cost.tp_s = tp_comm;
  }
  // Context parallel: ring exchange of K and V, overlapped with the attention of each step
  // (Megatron-Core context parallelism; backward also returns dK and dV).
  if (x.p.cp > 1) {
    const double kv_bytes = kB16 * T * 2.0 * kv_width / t;
    const double ring_fwd = static_cast<double>(x.p.cp - 1) * p2p_time_s(kv_bytes, x.cp_link);
    cost.cp_s = std::max(0.0, ring_fwd - attn_fwd) + std::max(0.0, 2.0 * ring_fwd - attn_bwd);
    if (recompute == Recompute::full) cost.cp_s += std::max(0.0, ring_fwd - attn_fwd);
  }
  // Expert parallel: dispatch and combine all-to-alls, forward and backward, not overlapped.
  if (moe && x.p.ep > 1) {
    const double routed_bytes = kB16 * T / sp_divisor * static_cast<double>(m.moe.top_k) * h;
    const double one = all_to_all_time_s(routed_bytes, x.p.ep, x.ep_link);
    cost.ep_s = (recompute == Recompute::full ? 6.0 : 4.0) * one;
  }
  cost.comm_s = cost.tp_s + cost.cp_s + cost.ep_s;
  return cost;
}

}  // namespace tessera
