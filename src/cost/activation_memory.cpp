#include "cost/activation_memory.h"

#include "core/units.h"
#include "cost/expert_load.h"

namespace tessera {

namespace {
constexpr double kDropoutMaskBytes = 1.0;      // one byte per element (Korthikanti §4.1)
constexpr double kSoftmaxStatBytes = 4.0;      // fp32 log-sum-exp per query and head (flash)
constexpr double kScoreBytesWithDropout = 5.0;  // softmax out 2 + dropout mask 1 + dropout out 2
constexpr double kScoreBytesNoDropout = 2.0;    // softmax out 2
// Router, per local token and expert: the fp32 scores its softmax / sigmoid saves and the
// boolean routing map; per chosen expert the fp32 probability carried with the token
// (Megatron-Core transformer/moe/router.py and moe_utils.py, d98e8a64).
constexpr double kRouterScoreBytesPerExpert = units::kBytesFp32 + 1.0;
constexpr double kRoutedProbBytes = units::kBytesFp32;
// Transformer Engine quantizes a GEMM input that only the weight gradient needs to FP8 and saves
// that copy (column-wise usage only). Scale overhead per element: per-tensor recipes none; the
// blockwise recipe one fp32 scale per 1 x 128 tile; MXFP8 one E8M0 byte per 32 elements (TE
// docs, "Using FP8 with Transformer Engine": Float8BlockScaling, MXFP8BlockScaling).
constexpr double kBlockwiseTileElements = 128.0;
constexpr double kMxfp8BlockElements = 32.0;
// DeepEP allocates fixed NVLink and RDMA buffers per communicator, sized by its size hints;
// its README's examples use 1e9 bytes each (deepseek-ai/DeepEP README, "Buffer").
constexpr double kDeepEpNvlBufferBytes = 1e9;
constexpr double kDeepEpRdmaBufferBytes = 1e9;

bool has(unsigned modules, unsigned bit) { return (modules & bit) != 0; }

// torchtitan's op-level selective activation checkpointing (torchtitan 9dec370,
// torchtitan/parallelisms/parallelize_llama.py, _apply_ac_to_transformer_block): each block is
// checkpointed, and the policy saves the outputs of ops in _save_list (aten.mm, flash / efficient
// SDPA, reduce_scatter) except every second mm of the block; the rest is recomputed. A Llama block
// runs seven mms (wq, wk, wv, wo, w1, w3, w2): the 1st, 3rd, 5th and 7th are saved.
double torchtitan_op_sac_per_token(const ModelSpec& m, const ActivationShape& a) {
  const double h = static_cast<double>(m.hidden);
  const double t = static_cast<double>(a.tp);
  const double b16 = units::kBytesBf16;
  const double q_width = static_cast<double>(m.heads) * m.head_dim;
  const double v_width = static_cast<double>(m.kv_heads) * m.head_dim;
  const double f = static_cast<double>(m.ffn_hidden);
  const double sp_divisor = a.sequence_parallel ? t : 1.0;
  double bytes = b16 * h / sp_divisor;          // the block input (the checkpoint's input)
  bytes += b16 * (q_width + v_width) / t;       // wq and wv outputs
  bytes += b16 * q_width / t + kSoftmaxStatBytes * static_cast<double>(m.heads) / t;  // SDPA out, lse
  bytes += b16 * f / t;                         // w1 output
  // w2 output: with tp > 1 a partial sum over the whole sequence, reduce-scattered (also saved);
  // the wo output's reduce-scatter is saved too.
  bytes += b16 * h + (a.tp > 1 ? 2.0 * b16 * h / t : 0.0);
  return bytes;
}
}  // namespace

ActivationShape activation_shape(const Plan& p, const Workload& w) {
  ActivationShape a;
  a.seq = static_cast<double>(w.seq_len) / static_cast<double>(p.cp);
  a.micro_batch = static_cast<double>(p.micro_batch);
  a.tp = p.tp;
  a.sequence_parallel = p.sequence_parallel;
  a.flash_attention = p.flash_attention;
  a.recompute = p.recompute;
  a.recompute_modules = p.selective_modules();
  a.etp = p.expert_tp();
  a.expert_load = expert_load_factor(p);
  a.fp8 = p.precision == Precision::fp8;
  a.fp8_recipe = p.fp8_recipe;
  return a;
}

double saved_gemm_input_bytes(const ActivationShape& a) {
  if (!a.fp8) return units::kBytesBf16;
  switch (a.fp8_recipe) {
    case Fp8Recipe::blockwise: return units::kBytesFp8 + units::kBytesFp32 / kBlockwiseTileElements;
    case Fp8Recipe::mxfp8: return units::kBytesFp8 + 1.0 / kMxfp8BlockElements;
    case Fp8Recipe::delayed:
    case Fp8Recipe::tensorwise: break;
  }
  return units::kBytesFp8;
}

double routed_tokens_on_rank(const ModelSpec& m, const ActivationShape& a) {
  // Megatron requires sequence parallelism for MoE with tp > 1, so a rank's local tokens are
  // s b / (cp tp); the expert layer all-gathers them over its etp ranks (MoE parallel folding,
  // token_dispatcher.py) and receives top_k copies per token, the busiest rank `expert_load` times
  // the mean.
  const double etp = static_cast<double>(a.etp == 0 ? a.tp : a.etp);
  const double local = a.seq * a.micro_batch / static_cast<double>(a.tp);
  return local * etp * static_cast<double>(m.moe.top_k) * a.expert_load;
}

double layer_activation_bytes(const ModelSpec& m, const ActivationShape& a, bool moe) {
  const double tokens = a.seq * a.micro_batch;
  const double h = static_cast<double>(m.hidden);
  const double t = static_cast<double>(a.tp);
  const double sp_divisor = a.sequence_parallel ? t : 1.0;
  const double b16 = units::kBytesBf16;
  const double g = saved_gemm_input_bytes(a);  // a GEMM input kept only for its weight gradient
  const bool torchtitan = a.framework == TrainingFramework::torchtitan;

  if (a.recompute == Recompute::full) return b16 * tokens * h / sp_divisor;  // the layer input
  if (torchtitan && a.recompute == Recompute::selective && !moe)
    return torchtitan_op_sac_per_token(m, a) * tokens;

  const unsigned mods = a.recompute == Recompute::selective
                            ? (a.recompute_modules == 0 ? unsigned{kRecomputeCoreAttn} : a.recompute_modules)
                            : 0u;
  // layernorm recompute (output-discarding checkpoint) reaches only norms that are modules of
  // their own: Megatron's Transformer Engine spec fuses the attention norm into the QKV GEMM
  // (TELayerNormColumnParallelLinear, input_layernorm = IdentityOp) except for MLA, and the MLP
  // norm into fc1 except in MoE layers (models/gpt/gpt_layer_specs.py, transformer_layer.py).
  const bool rc_attn_norm = has(mods, kRecomputeLayernorm) && m.attention == AttentionKind::mla;
  const bool rc_mlp_norm = has(mods, kRecomputeLayernorm) && moe;

  // Outside the tensor-parallel regions (Korthikanti's "10 s b h"): the two norm inputs (the
  // residual stream), the norm outputs feeding attention and the MLP, two dropout masks. A dense
  // layer's norm outputs are GEMM inputs (FP8 when quantized); an MoE layer's MLP norm output
  // feeds the 16-bit router. PyTorch tensor parallelism (torchtitan) saves the all-gathered norm
  // outputs over the whole sequence.
  const double norm_out_divisor = torchtitan ? 1.0 : sp_divisor;
  double per_token = 2.0 * b16 * h / sp_divisor;  // two norm inputs
  if (m.dropout) per_token += 2.0 * kDropoutMaskBytes * h / sp_divisor;
  if (!rc_attn_norm) per_token += g * h / norm_out_divisor;
  if (!rc_mlp_norm) per_token += (moe ? b16 : g) * h / norm_out_divisor;

  // Attention. Q, K, V are the core attention's inputs (16-bit); its output is the out-projection
  // input (16-bit for flash's backward; with FP8 the projection also saves its own FP8 copy).
  const double heads = static_cast<double>(m.heads);
  double qkv_split = 0;     // per token, split over tp
  double latents = 0;       // MLA latents, per token on the sequence-parallel shard
  double out_width = heads * m.head_dim;
  if (m.attention == AttentionKind::mla) {
    // multi_latent_attention.py: q_compressed = q_down(x) then q_layernorm (norm input and output
    // kept; the output is q_up's input), kv_combined = kv_down(x) split into the kv latent
    // (normed, kv_up's input) and the shared rope key k_pos_emb (gathered over the sequence);
    // then the per-head Q = [q_nope, q_rope], K = [k_nope, k_rope], V after the up-projections.
    // mla_up_proj checkpoints the up-projections and rope, discarding Q, K and V.
    const double ql = static_cast<double>(m.mla.q_lora_rank);
    const double kvl = static_cast<double>(m.mla.kv_lora_rank);
    const double rope = static_cast<double>(m.mla.qk_rope_head_dim);
    const double qk_head = static_cast<double>(m.mla.qk_nope_head_dim) + rope;
    const double v_head = static_cast<double>(m.mla.v_head_dim);
    latents = (ql > 0 ? b16 * ql + g * ql : 0.0) + b16 * (kvl + rope) + g * kvl;
    per_token += latents / sp_divisor + b16 * rope;  // k_pos_emb gathered: whole sequence
    if (!has(mods, kRecomputeMlaUpProj)) qkv_split += b16 * heads * (2.0 * qk_head + v_head);
    out_width = heads * v_head;
  } else {
    const double q_width = heads * m.head_dim;
    const double kv_width = static_cast<double>(m.kv_heads) * m.head_dim;
    qkv_split += b16 * (q_width + 2.0 * kv_width);
    // QK-norm (Qwen3, OLMo 2): the per-head RMSNorm keeps its input, the pre-norm Q and K.
    if (m.qk_norm) qkv_split += b16 * (q_width + kv_width);
  }
  const bool rc_attn = has(mods, kRecomputeCoreAttn);
  double out_proj = b16 * out_width;
  if (a.fp8) out_proj = (rc_attn ? 0.0 : b16 * out_width) + g * out_width;
  double attention_split = qkv_split + out_proj;
  if (a.flash_attention) {
    if (!rc_attn) attention_split += kSoftmaxStatBytes * heads;  // log-sum-exp, fp32
  } else if (!rc_attn) {
    const double score_bytes = m.dropout ? kScoreBytesWithDropout : kScoreBytesNoDropout;
    attention_split += score_bytes * heads * a.seq;  // 5 a s / t per token with dropout
  }
  per_token += attention_split / t;

  const double act_inputs = m.mlp == MlpType::swiglu ? 2.0 : 1.0;
  // One MLP's activations per token at width f: fc1 output(s) (16-bit, the activation's input)
  // and the activation output (fc2's input, a GEMM input); moe_act discards the latter.
  auto mlp_bytes = [&](double f, bool drop_act_out) { return b16 * act_inputs * f + (drop_act_out ? 0.0 : g * f); };
  if (!moe) {
    if (!has(mods, kRecomputeMlp)) per_token += mlp_bytes(static_cast<double>(m.ffn_hidden), false) / t;
    return per_token * tokens;
  }

  double bytes = per_token * tokens;
  if (has(mods, kRecomputeMoe)) return bytes;  // the MoE layer keeps only its input
  const double f = static_cast<double>(m.moe.expert_ffn_hidden);
  const double experts = static_cast<double>(m.moe.experts);
  // Router on the sequence-parallel shard of the local tokens.
  const double local_tokens = tokens / sp_divisor;
  bytes += local_tokens * (kRouterScoreBytesPerExpert * experts);
  // Routed experts (experts.py, TEGroupedMLP): fc1 input (the dispatched token), fc1 output and
  // activation output at ffn / etp, the permuted probability (applied inside the activation).
  const double etp = static_cast<double>(a.etp == 0 ? a.tp : a.etp);
  const double routed = routed_tokens_on_rank(m, a);
  bytes += routed * (g * h + mlp_bytes(f / etp, has(mods, kRecomputeMoeAct)) + kRoutedProbBytes);
  // Shared experts: a dense MLP of shared x f over the layer's tokens, split by tp.
  if (m.moe.shared_experts > 0 && !has(mods, kRecomputeSharedExperts))
    bytes += tokens * mlp_bytes(static_cast<double>(m.moe.shared_experts) * f, false) / t;
  return bytes;
}

double moe_dispatch_buffer_bytes(const ModelSpec& m, const ActivationShape& a, MoeDispatcher dispatcher,
                                 std::int64_t ep) {
  if (!m.is_moe()) return 0;
  const double h = static_cast<double>(m.hidden);
  const double b16 = units::kBytesBf16;
  const double etp = static_cast<double>(a.etp == 0 ? a.tp : a.etp);
  const double local = a.seq * a.micro_batch / static_cast<double>(a.tp);
  switch (dispatcher) {
    case MoeDispatcher::allgather:
      // Every token of the ep x etp group gathered (with its routing map and probabilities).
      return local * etp * static_cast<double>(ep) *
             (b16 * h + kRouterScoreBytesPerExpert * static_cast<double>(m.moe.experts));
    case MoeDispatcher::flex: return kDeepEpNvlBufferBytes + (ep > 1 ? kDeepEpRdmaBufferBytes : 0.0);
    case MoeDispatcher::alltoall: break;
  }
  // The locally permuted token copies sent (and, in backward, their gradients), once per layer.
  return local * static_cast<double>(m.moe.top_k) * a.expert_load * b16 * h;
}

}  // namespace tessera
