#include "cost/memory_model.h"

#include <algorithm>

#include "cost/activation_memory.h"
#include "core/units.h"
#include "model/parameter_count.h"

namespace tessera {

namespace {
// At the start of the loss backward the 16-bit logits, the fp32 softmax the loss saved
// (Korthikanti §4.1: "4 s b v / t") and its fp32 gradient are alive together.
constexpr double kLogitBytes = units::kBytesBf16 + 2.0 * units::kBytesFp32;
// ZeRO-3 keeps the layer being computed and the prefetched next one gathered.
constexpr double kZero3GatheredLayers = 2.0;
}  // namespace

StageParameters stage_parameters(const ModelSpec& m, const Plan& p, const StageShape& s) {
  const ParameterCount c = count_parameters(m);
  const double t = static_cast<double>(p.tp);
  const double dense_layers = static_cast<double>(s.layers - s.moe_layers);
  const double moe_layers = static_cast<double>(s.moe_layers);
  StageParameters out;
  // Norm weights are replicated across tensor-parallel ranks; everything else is split.
  out.dense = dense_layers * ((c.attention_per_layer + c.dense_mlp_per_layer) / t + c.norms_per_layer) +
              moe_layers * (c.attention_per_layer / t + c.norms_per_layer);
  if (moe_layers > 0) {
    const double router = static_cast<double>(m.hidden) * m.moe.experts;
    const double experts = c.moe_mlp_per_layer - router;
    // Routed experts are spread over ep ranks and split by tp (expert tensor parallel = tp);
    // shared experts are a dense MLP split by tp.
    const double one_expert = m.moe.experts > 0 ? experts / (m.moe.experts + m.moe.shared_experts) : 0;
    const double routed = one_expert * m.moe.experts / (static_cast<double>(p.ep) * t);
    const double shared = one_expert * m.moe.shared_experts / t;
    out.dense += moe_layers * (router + shared);
    out.expert = moe_layers * routed;
  }
  if (s.has_embedding) out.dense += c.embedding / t;
  if (s.has_output_head) {
    // A tied head lives on the last stage as a second copy when the pipeline splits them.
    const double head = m.tied_embeddings ? (s.has_embedding ? 0.0 : static_cast<double>(m.vocab) * m.hidden)
                                          : c.output_head;
    out.dense += head / t + c.final_norm;
  }
  return out;
}

MemoryBreakdown stage_memory(const ModelSpec& m, const Plan& p, const Workload& w,
                             const StageShape& s) {
  MemoryBreakdown mem;
  const StageParameters params = stage_parameters(m, p, s);
  const double dp = static_cast<double>(p.dp * p.cp);  // gradients are reduced over dp x cp
  const double edp = std::max(1.0, dp / static_cast<double>(p.ep));
  const double sharded_params = params.dense / dp + params.expert / edp;
  const double total_params = params.total();

  // ZeRO-3 under pipelining keeps each stage's weights gathered and its gradients unsharded
  // across the micro-batches of a step (PyTorch FSDP2 as torchtitan drives it with PP:
  // reshard_after_forward off, gradient reduce-scatter on the last micro-batch only).
  const bool zero3 = p.zero == OptimizerSharding::zero3;
  const bool zero3_resident = zero3 && p.pp > 1;
  mem.weights_bytes = kWeightBytesPerParam * (zero3 && !zero3_resident ? sharded_params : total_params);
  const bool shard_grads = (p.zero == OptimizerSharding::zero2 || zero3) && !zero3_resident;
  mem.gradients_bytes = kGradBytesPerParam * (shard_grads ? sharded_params : total_params);
  mem.optimizer_bytes = kOptimizerBytesPerParam * (p.zero == OptimizerSharding::none ? total_params : sharded_params);

  ActivationShape shape;
  shape.seq = static_cast<double>(w.seq_len) / static_cast<double>(p.cp);
  shape.micro_batch = static_cast<double>(p.micro_batch);
  shape.tp = p.tp;
  shape.sequence_parallel = p.sequence_parallel;
  shape.flash_attention = p.flash_attention;
  shape.recompute = p.recompute;
  const double dense_layers = static_cast<double>(s.layers - s.moe_layers);
  double per_microbatch = dense_layers * layer_activation_bytes(m, shape, false) +
                          static_cast<double>(s.moe_layers) * layer_activation_bytes(m, shape, true);
  const std::int64_t recomputed = s.recomputed_layers < 0 ? s.layers : std::min(s.recomputed_layers, s.layers);
  if (p.recompute == Recompute::full && recomputed < s.layers && s.layers > 0) {
    // Full recompute of only some layers: the rest keep their whole activations.
    ActivationShape kept = shape;
    kept.recompute = Recompute::none;
    const double kept_fraction = static_cast<double>(s.layers - recomputed) / static_cast<double>(s.layers);
    const double kept_bytes = dense_layers * layer_activation_bytes(m, kept, false) +
                              static_cast<double>(s.moe_layers) * layer_activation_bytes(m, kept, true);
    per_microbatch = (1.0 - kept_fraction) * per_microbatch + kept_fraction * kept_bytes;
  }
  mem.activations_bytes = per_microbatch * s.inflight_microbatches;
  if (p.recompute == Recompute::full && recomputed > 0) {
    // Backward re-runs one layer's forward at a time and holds its full activations.
    ActivationShape working = shape;
    working.recompute = Recompute::none;
    mem.activations_bytes += layer_activation_bytes(m, working, s.moe_layers > 0);
  }
  const double tokens = shape.seq * shape.micro_batch;
  if (s.has_output_head)
    mem.logits_bytes = kLogitBytes * tokens * static_cast<double>(m.vocab) / static_cast<double>(p.tp);
  if (zero3 && !zero3_resident && s.layers > 0)
    mem.buffers_bytes = kWeightBytesPerParam * kZero3GatheredLayers * total_params / static_cast<double>(s.layers);
  mem.framework_bytes = kFrameworkOverheadBytes;
  return mem;
}

}  // namespace tessera
