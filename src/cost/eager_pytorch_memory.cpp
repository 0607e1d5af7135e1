#include "cost/eager_pytorch_memory.h"

#include <algorithm>

#include "core/units.h"
#include "cost/adapter_parameters.h"
#include "cost/eager_kernels.h"
#include "cost/memory_model.h"
#include "cost/offloaded_state.h"
#include "model/parameter_count.h"

namespace tessera {

namespace {


// State per parameter (fp32 parameters under AMP; torch.optim.AdamW(fused=True) keeps exp_avg and
// exp_avg_sq in the parameter's dtype): weight 4, gradient 4, two moments 8. QLoRA's bf16 adapters
// keep 8 too: its paged_adamw_32bit (qlora.py default optim) holds both moments in fp32.
constexpr double kEagerWeightBytes = units::kBytesFp32;
constexpr double kEagerGradBytes = units::kBytesFp32;
constexpr double kEagerAdamBytes = 2.0 * units::kBytesFp32;

// What autograd saves per token in a Hugging Face Llama-style decoder layer under
// autocast(bf16) with fp32 parameters (transformers modeling_llama.py LlamaDecoderLayer /
// LlamaRMSNorm / LlamaMLP at 5dd4a635; ATen autocast_mode.cpp cached_cast). The embedding output
// is fp32 (nn.Embedding is on no autocast list), so the residual stream and both RMSNorms run in
// fp32; each linear casts its input to bf16 separately (cached_cast caches leaf parameters only):
//   fp32: the layer input (pow's and the norm's), norm-1 output, the residual after attention,
//         norm-2 output                                              4 x 4 = 16 bytes per h
//   bf16: the q, k, v input casts and the gate, up input casts       5 x 2 = 10 bytes per h
constexpr double kSavedResidualBytesPerHidden = 16.0 + 10.0;
// The two norms' rsqrt(mean(x^2) + eps), one fp32 value per token each.
constexpr double kSavedNormStatBytes = 2.0 * units::kBytesFp32;
// Attention: q and k after RoPE as cast for SDPA, v, and SDPA's output (bf16 each, per head
// width), and flash attention's fp32 logsumexp per head.
constexpr double kSavedAttentionBytesPerWidth = units::kBytesBf16;
constexpr double kSavedLogsumexpBytesPerHead = units::kBytesFp32;
// SwiGLU MLP (act_fn(gate_proj(x)) * up_proj(x)): the gate output (SiLU's input), SiLU's output,
// the up output and their product (down_proj's input), bf16 each: 4 x 2 bytes per f. A 2-matrix
// MLP saves the activation's input and output.
constexpr double kSavedSwigluBytesPerFfn = 4.0 * units::kBytesBf16;
constexpr double kSavedGeluBytesPerFfn = 2.0 * units::kBytesBf16;
// With gradient checkpointing (transformers GradientCheckpointingLayer, torch.utils.checkpoint
// use_reentrant=False) a layer keeps only its fp32 input.
constexpr double kCheckpointBytesPerHidden = units::kBytesFp32;
// The final norm (its fp32 input and output) and lm_head's bf16 input cast.
constexpr double kHeadInputBytesPerHidden = 2.0 * units::kBytesFp32 + units::kBytesBf16;
// Tensors of tokens x vocab (transformers loss_utils.py ForCausalLMLoss: logits.float(), then
// cross_entropy = log_softmax + nll_loss; the model's output object, and so its bf16 logits, is
// dropped once the loss is taken):
//   forward   bf16 logits, their fp32 copy, the fp32 log-probs log_softmax saves     2 + 4 + 4
//   backward  the saved log-probs, nll_loss's fp32 gradient, log_softmax's fp32 input gradient
constexpr double kLogitForwardBytes = units::kBytesBf16 + 2.0 * units::kBytesFp32;
constexpr double kLogitBackwardBytes = 3.0 * units::kBytesFp32;
// Autocast's bf16 copy of each linear weight: 2 bytes per parameter.
constexpr double kCastWeightBytes = units::kBytesBf16;
// FSDP (zero3) gathers the running unit and prefetches the next (FSDP's forward/backward prefetch).
constexpr double kGatheredLayers = 2.0;

struct EagerSizes {
  double params = 0;         // all parameters (a tied embedding once)
  double cast_weights = 0;   // linear weights autocast copies to bf16, lm_head included
  double head_weights = 0;   // lm_head's vocab x hidden (tied or not)
  double layer_params = 0;   // one decoder layer
  double layer_cast = 0;     // one decoder layer's linear weights
  double embedding = 0;      // the input embedding's parameters
  double tokens = 0;         // per micro-batch
  double layers = 0;
  double microbatches = 1;
  double dp = 1;
  double trainable = 0;      // parameters with gradients and optimizer state (all, or the adapters)
  double trainable_bytes = kEagerWeightBytes;  // bytes of one trainable parameter, and of its gradient
  // Parameters whose bf16 autocast copy is alive at the forward's end, in the loss backward and in
  // a layer's recompute: every fp32 linear weight, or under PEFT only the fp32 ones (the adapters,
  // and QLoRA's fp32 lm_head); a bf16 or NF4 base is not cast.
  double cast_copies = 0, head_cast_copies = 0, layer_cast_copies = 0;
  // QLoRA: the bf16 weight bitsandbytes dequantizes for one matmul (the largest matrix), transient.
  double dequantized = 0;
};

EagerSizes eager_sizes(const ModelSpec& m, const Plan& p, const Workload& w) {
  const ParameterCount c = count_parameters(m);
  EagerSizes s;
  s.params = c.total();
  s.layers = static_cast<double>(m.layers);
  s.layer_cast = eager_layer_cast_params(m, m.is_moe());
  s.layer_params = s.layer_cast + c.norms_per_layer;
  s.head_weights = c.unembedding;
  s.cast_weights = s.layers * s.layer_cast + s.head_weights;
  s.embedding = c.embedding;
  s.tokens = static_cast<double>(p.micro_batch) * static_cast<double>(w.seq_len);
  s.microbatches = static_cast<double>(p.microbatches(w));
  s.dp = static_cast<double>(p.dp);
  s.trainable = p.tuning.adapters() ? adapter_params(m, p.tuning) : s.params;
  s.cast_copies = s.cast_weights;
  s.head_cast_copies = s.head_weights;
  s.layer_cast_copies = s.layer_cast;
  if (p.tuning.adapters()) {
    const double head = p.tuning.quantized_base() ? s.head_weights : 0.0;
    s.cast_copies = s.trainable + head;
    s.head_cast_copies = head;
    s.layer_cast_copies = s.trainable / s.layers;
  }
  if (p.tuning.quantized_base()) {
    // QLoRA's recipe (artidoro/qlora 7f4e95a qlora.py get_accelerate_model, --bf16): after
    // prepare_model_for_kbit_training it casts the LoRA layers, embed_tokens and lm_head to bf16
    // and keeps the norms in fp32: bf16 adapters with bf16 gradients, nothing cast by autocast.
    s.trainable_bytes = units::kBytesBf16;
    s.cast_copies = s.head_cast_copies = s.layer_cast_copies = 0;
  }
  if (p.tuning.quantized_base())
    s.dequantized = static_cast<double>(m.hidden) * static_cast<double>(std::max(m.ffn_hidden, m.heads * m.head_dim));
  return s;
}

// Persistent state of one rank under the plan's sharding (FSDP / ZeroRedundancyOptimizer over
// dp; DDP's buckets hold a second copy of the gradients: torch.nn.parallel.DistributedDataParallel,
// gradient_as_bucket_view=False by default).
struct EagerState {
  double weights = 0, grads = 0, adam = 0, ddp_buckets = 0, gathered = 0;
};

// Bytes of the frozen base under PEFT: LoRA loads the model in bf16; QLoRA stores the decoder
// layers' linear weights in NF4, the norms in fp32 and the embeddings and lm_head in bf16
// (qlora.py above: peft's prepare_model_for_kbit_training casts them to fp32, qlora.py casts the
// embeddings and head back).
double frozen_bytes(const Plan& p, double params, double linear, double norms) {
  if (!p.tuning.quantized_base()) return units::kBytesBf16 * params;
  return kNf4BytesPerParam * linear + units::kBytesFp32 * norms + units::kBytesBf16 * (params - linear - norms);
}
double frozen_model_bytes(const EagerSizes& s, const Plan& p) {
  const double norms_per_layer = s.layer_params - s.layer_cast;
  return frozen_bytes(p, s.params, s.layers * s.layer_cast, s.layers * norms_per_layer);
}
double frozen_layer_bytes(const EagerSizes& s, const Plan& p) {
  return frozen_bytes(p, s.layer_params, s.layer_cast, s.layer_params - s.layer_cast);
}

EagerState eager_state(const EagerSizes& s, const Plan& p) {
  EagerState st;
  const bool zero3 = p.zero == OptimizerSharding::zero3;
  const bool shard_grads = zero3 || p.zero == OptimizerSharding::zero2;
  const double shard = zero3 ? 1.0 / s.dp : 1.0;
  st.weights = p.tuning.adapters() ? shard * (frozen_model_bytes(s, p) + s.trainable_bytes * s.trainable)
                                   : shard * kEagerWeightBytes * s.params;
  st.grads = s.trainable_bytes * (shard_grads ? s.trainable / s.dp : s.trainable);
  st.adam = kEagerAdamBytes * (p.zero == OptimizerSharding::none ? s.trainable : s.trainable / s.dp);
  if (s.dp > 1 && !shard_grads) st.ddp_buckets = s.trainable_bytes * s.trainable;
  const double layer_trainable = s.trainable / s.layers;
  if (zero3)
    st.gathered = kGatheredLayers * ((p.tuning.adapters() ? frozen_layer_bytes(s, p) : kEagerWeightBytes * s.layer_params) +
                                     s.trainable_bytes * layer_trainable);
  return st;
}

}  // namespace

double eager_layer_saved_bytes_per_token(const ModelSpec& m) {
  const EagerLayerWidths w = eager_layer_widths(m);
  const double mlp = (m.mlp == MlpType::swiglu ? kSavedSwigluBytesPerFfn : kSavedGeluBytesPerFfn) * w.ffn;
  return kSavedResidualBytesPerHidden * w.hidden + kSavedNormStatBytes +
         kSavedAttentionBytesPerWidth * (2.0 * w.q + 2.0 * w.kv) +
         kSavedLogsumexpBytesPerHead * static_cast<double>(m.heads) + mlp;
}

double eager_activation_bytes_per_microbatch(const ModelSpec& m, const Plan& p, const Workload& w) {
  const double tokens = static_cast<double>(p.micro_batch) * static_cast<double>(w.seq_len);
  const double per_layer = p.recompute == Recompute::full ? kCheckpointBytesPerHidden * static_cast<double>(m.hidden)
                                                          : eager_layer_saved_bytes_per_token(m);
  return static_cast<double>(m.layers) * per_layer * tokens;
}

MemoryBreakdown eager_pytorch_memory(const ModelSpec& m, const Plan& p, const Workload& w, const GpuSpec& gpu) {
  const EagerSizes s = eager_sizes(m, p, w);
  const EagerState st = eager_state(s, p);
  const bool checkpointing = p.recompute == Recompute::full;
  const double h = static_cast<double>(m.hidden);
  const double vocab_tokens = static_cast<double>(m.vocab) * s.tokens;
  const double saved_layer = eager_layer_saved_bytes_per_token(m) * s.tokens;
  const double saved_layers = s.layers * (checkpointing ? kCheckpointBytesPerHidden * h * s.tokens : saved_layer);
  const double head_inputs = kHeadInputBytesPerHidden * h * s.tokens;
  // Micro-batches after the first run beside the gradients accumulated so far.
  const double accumulated = s.microbatches > 1 ? st.grads : 0.0;
  const double ddp = st.ddp_buckets;

  MemoryBreakdown best;
  auto consider = [&](MemoryBreakdown mem) {
    mem.optimizer_bytes = st.adam;
    mem.buffers_bytes += st.gathered + units::kBytesBf16 * s.dequantized;
    mem.framework_bytes = runtime_reserve_bytes(p) + measured_reserve_bytes(gpu) +
                          kAllocatorFragmentationFraction * (mem.activations_bytes + mem.logits_bytes + mem.buffers_bytes);
    if (mem.total() > best.total()) best = mem;
  };
  MemoryBreakdown forward_end;
  forward_end.weights_bytes = st.weights + kCastWeightBytes * s.cast_copies;
  forward_end.gradients_bytes = accumulated + ddp;
  forward_end.activations_bytes = saved_layers;
  forward_end.logits_bytes = head_inputs + kLogitForwardBytes * vocab_tokens;
  consider(forward_end);

  MemoryBreakdown loss_backward = forward_end;
  loss_backward.weights_bytes = st.weights + kCastWeightBytes * (checkpointing ? s.head_cast_copies : s.cast_copies);
  loss_backward.logits_bytes = head_inputs + kLogitBackwardBytes * vocab_tokens;
  consider(loss_backward);

  if (checkpointing) {
    // Layer 0's recompute: every gradient but its own and the embedding's, its saved tensors and
    // its bf16 weights.
    MemoryBreakdown first_layer;
    first_layer.weights_bytes = st.weights + kCastWeightBytes * s.layer_cast_copies;
    const double grad_share = st.grads / (s.trainable_bytes * s.trainable);  // 1, or 1 / dp when sharded
    const double layer_trainable = p.tuning.adapters() ? s.trainable / s.layers : s.layer_params + s.embedding;
    const double pending = s.trainable_bytes * layer_trainable * grad_share;
    first_layer.gradients_bytes = std::max(0.0, st.grads - pending) + ddp;
    first_layer.activations_bytes = kCheckpointBytesPerHidden * h * s.tokens + saved_layer;
    consider(first_layer);
  }

  // The end of backward: every gradient; a tied embedding's backward (embedding_dense_backward)
  // makes a dense fp32 vocab x hidden gradient before adding it to the lm_head's.
  MemoryBreakdown backward_end;
  backward_end.weights_bytes = st.weights;
  const bool head_trained = !p.tuning.adapters();
  backward_end.gradients_bytes = st.grads + ddp + (m.tied_embeddings && head_trained ? kEagerGradBytes * s.head_weights : 0.0);
  consider(backward_end);
  if (p.offload.any_offload()) {
    const double optimizer_params = p.zero == OptimizerSharding::none ? s.trainable : s.trainable / s.dp;
    const double layer_bytes = checkpointing ? kCheckpointBytesPerHidden * h * s.tokens : saved_layer;
    move_offloaded_state(best, p, {optimizer_params, layer_bytes, saved_layers});
    // The runtime reserve's fragmentation share follows the transient memory left on the GPU.
    best.framework_bytes = runtime_reserve_bytes(p) + measured_reserve_bytes(gpu) +
                           kAllocatorFragmentationFraction * (best.activations_bytes + best.logits_bytes + best.buffers_bytes);
  }
  return best;
}

}  // namespace tessera
