#include "cost/layer_streaming.h"

#include <algorithm>
#include <cmath>

#include "core/units.h"
#include "cost/eager_kernels.h"
#include "cost/memory_model.h"
#include "model/parameter_count.h"

namespace tessera {

namespace {


// A bf16 LlamaRMSNorm saves its fp32 upcast (pow's and the product's input), the bf16 normalised
// value the weight multiplies, and its fp32 rsqrt per token: 4 + 2 bytes per h, 4 per token. The
// residual adds save nothing; the projections save the norm outputs already counted.
constexpr double kNormSavedBytesPerHidden = units::kBytesFp32 + units::kBytesBf16;
constexpr double kNormSavedBytesPerToken = units::kBytesFp32;
constexpr double kNormsPerLayer = 2.0;
// Attention: q and k after RoPE, v and the attention output (bf16, per head width) and flash
// attention's fp32 logsumexp per head; a SwiGLU MLP: gate output, SiLU output, up output and their
// product (bf16 each); a 2-matrix MLP: the activation's input and output.
constexpr double kAttentionSavedBytesPerWidth = units::kBytesBf16;
constexpr double kLogsumexpBytesPerHead = units::kBytesFp32;
constexpr double kSwigluSavedBytesPerFfn = 4.0 * units::kBytesBf16;
constexpr double kGeluSavedBytesPerFfn = 2.0 * units::kBytesBf16;
// A loss chunk's tokens x vocab tensors: the bf16 logits and the loss's fp32 working copies.
constexpr double kLossChunkBytesPerLogit = units::kBytesBf16 + 2.0 * units::kBytesFp32;
// The hidden-state tensors around the layer being differentiated: its input's gradient coming in
// and going out (grad_hidden), bf16.
constexpr double kGradientHiddenTensors = 2.0;
// The final norm's input (the last checkpoint, with its gradient) and output, saved for the loss.
constexpr double kHeadInputTensors = 2.0;

// The largest decoder layer: the flat buffers, templates and slabs are sized to it.
double largest_layer_params(const ParameterCount& c) {
  const double shared = c.attention_per_layer + c.norms_per_layer;
  const double dense = c.dense_layers > 0 ? c.dense_mlp_per_layer : 0.0;
  const double moe = c.moe_layers > 0 ? c.moe_mlp_per_layer : 0.0;
  return shared + std::max(dense, moe);
}

// Activations of the backward's peak: every block's checkpoint and the last hidden state, the
// block's recomputed layer outputs, the layer being differentiated, and its gradients in and out.
double activation_bytes(const ModelSpec& m, double tokens) {
  const double hidden_tensor = units::kBytesBf16 * static_cast<double>(m.hidden) * tokens;
  const double blocks = std::ceil(static_cast<double>(m.layers) / kMegatrainCheckpointInterval);
  const double hidden_tensors = blocks + 1.0 + kMegatrainCheckpointInterval + kGradientHiddenTensors;
  return hidden_tensors * hidden_tensor + streamed_layer_saved_bytes_per_token(m) * tokens;
}

}  // namespace

double streamed_layer_saved_bytes_per_token(const ModelSpec& m) {
  const EagerLayerWidths w = eager_layer_widths(m);
  const double mlp = (m.mlp == MlpType::swiglu ? kSwigluSavedBytesPerFfn : kGeluSavedBytesPerFfn) * w.ffn;
  return kNormsPerLayer * (kNormSavedBytesPerHidden * w.hidden + kNormSavedBytesPerToken) +
         kAttentionSavedBytesPerWidth * (2.0 * w.q + 2.0 * w.kv) + kLogsumexpBytesPerHead * static_cast<double>(m.heads) +
         mlp;
}

double streamed_layer_params(const ModelSpec& m) { return count_parameters(m).transformer_layers(); }

MemoryBreakdown layer_streaming_memory(const ModelSpec& m, const Plan& p, const Workload& w, const GpuSpec& gpu) {
  const ParameterCount c = count_parameters(m);
  const double layer = largest_layer_params(c);
  const double resident = c.embedding + c.output_head + c.final_norm;
  const double tokens = static_cast<double>(p.micro_batch) * static_cast<double>(w.seq_len);
  const double hidden_tensor = units::kBytesBf16 * static_cast<double>(m.hidden) * tokens;
  MemoryBreakdown mem;
  mem.weights_bytes = units::kBytesBf16 * (kMegatrainGpuLayerCopies * layer + resident);
  mem.gradients_bytes = units::kBytesBf16 * (kMegatrainGpuGradLayers * layer + resident);
  mem.activations_bytes = activation_bytes(m, tokens);
  const double chunk_logits = static_cast<double>(p.micro_batch) * std::min(kMegatrainLossChunkTokens, static_cast<double>(w.seq_len)) *
                              static_cast<double>(m.vocab);
  mem.logits_bytes = kHeadInputTensors * hidden_tensor + kLossChunkBytesPerLogit * chunk_logits;
  mem.framework_bytes = runtime_reserve_bytes(p) + measured_reserve_bytes(gpu) +
                        kAllocatorFragmentationFraction * (mem.activations_bytes + mem.logits_bytes);
  // Host: the master weights and Adam for every parameter (an HF checkpoint has no MTP module),
  // the pinned gradient slabs and weight staging buffers.
  mem.host_bytes = kMegatrainHostBytesPerParam * c.main_total() +
                   units::kBytesBf16 * layer * (kMegatrainGradSlabs + kMegatrainHostStagingLayers);
  return mem;
}

}  // namespace tessera
