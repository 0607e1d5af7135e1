#include "cost/memory_model.h"

#include <algorithm>

#include "core/units.h"
#include "cost/adapter_parameters.h"
#include "cost/eager_pytorch_memory.h"
#include "cost/layer_streaming.h"
#include "cost/offloaded_state.h"
#include "hardware/physical_ranges.h"
#include "model/parameter_count.h"

namespace tessera {

namespace {
// At the start of the loss backward the 16-bit logits, the fp32 softmax the loss saved
// (Korthikanti §4.1: "4 s b v / t") and its fp32 gradient are alive together.
constexpr double kLogitBytes = units::kBytesBf16 + 2.0 * units::kBytesFp32;
// torchtitan (9dec370, train.py loss_fn): cross_entropy(pred.float()) saves the fp32 log-softmax;
// its backward holds that, the fp32 gradient arriving from nll_loss and the fp32 gradient it
// produces (the bf16 logits are freed before backward: `del pred`).
constexpr double kTorchtitanLogitBytes = 3.0 * units::kBytesFp32;
// With tensor parallelism torchtitan runs the loss under loss_parallel (parallel_dims.py
// loss_parallel_enabled: tp > 1), whose fused backward (pytorch 3be12382,
// torch/distributed/tensor/parallel/loss.py _nll_loss_and_log_softmax_backward) computes
// (zeros_like(x) + exp(x)) * grad over the vocabulary shard: the saved fp32 log-softmax x, the
// zero-filled gradient, exp(x) and their sum are alive together, four fp32 copies.
constexpr double kTorchtitanLossParallelLogitBytes = 4.0 * units::kBytesFp32;
// Megatron-Core's MTP modules (transformer/multi_token_prediction.py) compute their own logits
// and loss in the forward; each keeps its fp32 softmax for backward.
constexpr double kMtpLogitBytes = units::kBytesFp32;
// ZeRO-3 keeps the layer being computed and the prefetched next one gathered, and as many
// layers' unsharded gradients in flight to the reduce-scatter.
constexpr double kZero3GatheredLayers = 2.0;

// Bytes per logit of the vocabulary shard alive at the start of the loss backward.
double logit_bytes_per_element(const Plan& p, bool torchtitan) {
  if (!torchtitan) return kLogitBytes;
  return p.tp > 1 ? kTorchtitanLossParallelLogitBytes : kTorchtitanLogitBytes;
}

// Bytes of the cached FP8 copies of one GEMM weight for a recipe: Transformer Engine casts each
// weight once per step (Megatron passes is_first_microbatch, so the FP8 workspace is reused by the
// later micro-batches) in row-wise layout for the forward and column-wise (transposed) for the
// data gradient on Hopper; block recipes add their scales (128 x 128 blocks: negligible; MXFP8:
// one byte per 32 elements in each layout).
double fp8_weight_copy_bytes(const Plan& p) {
  const double one = units::kBytesFp8 + (p.fp8_recipe == Fp8Recipe::mxfp8 ? 1.0 / 32.0 : 0.0);
  return 2.0 * one;
}

// Bytes per GEMM parameter of the 16-bit model weight plus its FP8 copies; with fp8_param_gather
// the parameter itself is FP8 (Megatron --fp8-param-gather: no 16-bit copy, TE's FP8 tensor
// with its transpose).
double gemm_weight_bytes(const Plan& p) {
  if (p.precision != Precision::fp8) return kWeightBytesPerParam;
  return (p.fp8_param_gather ? 0.0 : kWeightBytesPerParam) + fp8_weight_copy_bytes(p);
}

// Communicators a rank of the plan uses (each with its own NCCL buffers).
double communicators(const Plan& p) {
  double n = 0;
  if (p.tp > 1) n += 1;
  if (p.dp * p.cp > 1) n += 1;
  if (p.pp > 1) n += 1;
  if (p.ep > 1 || p.expert_tp() != p.tp) n += 1;
  if (p.cp > 1) n += 1;
  return n;
}

// Frozen base weights of an adapter plan (plan/fine_tuning.h): 16-bit, or NF4 for the linear
// layers' weights under QLoRA (embeddings, norms and the output layer stay 16-bit).
double frozen_weight_bytes(const Plan& p, double all, double gemm) {
  const double gemm_bytes = p.tuning.quantized_base() ? kNf4BytesPerParam : kWeightBytesPerParam;
  return kWeightBytesPerParam * (all - gemm) + gemm_bytes * gemm;
}
}  // namespace

TrainableState trainable_state(const ModelSpec& m, const Plan& p, const StageShape& s, const StageParameters& params) {
  if (!p.tuning.adapters()) return {params.dense, params.expert};
  const double moe = static_cast<double>(s.moe_layers);
  const double dense = static_cast<double>(s.layers - s.moe_layers);
  const double adapters = (dense * adapter_params_per_layer(m, p.tuning, false) +
                           moe * adapter_params_per_layer(m, p.tuning, true)) / static_cast<double>(p.tp);
  return {adapters, 0.0};
}

double runtime_reserve_bytes(const Plan& p) {
  return kCudaContextBytes + kWorkspaceBytes + kNcclBytesPerCommunicator * communicators(p);
}

// GpuSpec::validate admits a negative correction only down to the part of the reserve every plan
// has, so a stage's framework_bytes never goes below zero.
static_assert(physical::kMaxNegativeReserveGib * units::kGiB <= kCudaContextBytes + kWorkspaceBytes);

double measured_reserve_bytes(const GpuSpec& gpu) { return gpu.memory_reserve_gib * units::kGiB; }

StageParameters stage_parameters(const ModelSpec& m, const Plan& p, const StageShape& s) {
  const ParameterCount c = count_parameters(m);
  const double t = static_cast<double>(p.tp);
  // Routed experts: spread over ep ranks and split by the expert tensor-parallel size (MoE
  // parallel folding, Megatron --expert-tensor-parallel-size).
  const double expert_split = static_cast<double>(p.ep) * static_cast<double>(p.expert_tp());
  const double dense_layers = static_cast<double>(s.layers - s.moe_layers);
  const double moe_layers = static_cast<double>(s.moe_layers);
  StageParameters out;
  // Norm weights are replicated across tensor-parallel ranks; everything else is split.
  out.dense = dense_layers * ((c.attention_per_layer + c.dense_mlp_per_layer) / t + c.norms_per_layer) +
              moe_layers * (c.attention_per_layer / t + c.norms_per_layer);
  out.gemm_dense = dense_layers * (c.attention_per_layer + c.dense_mlp_per_layer) / t +
                   moe_layers * c.attention_per_layer / t;
  double routed_per_layer = 0;  // all routed experts of one MoE layer (unsplit)
  if (m.is_moe()) {
    const double router = static_cast<double>(m.hidden) * m.moe.experts;
    const double experts = c.moe_mlp_per_layer - router;
    const double one_expert = experts / static_cast<double>(m.moe.experts + m.moe.shared_experts);
    routed_per_layer = one_expert * static_cast<double>(m.moe.experts);
    // Shared experts are a dense MLP split by tp; the router is replicated.
    const double shared = one_expert * static_cast<double>(m.moe.shared_experts) / t;
    out.dense += moe_layers * (router + shared);
    out.gemm_dense += moe_layers * shared;
    out.expert = moe_layers * routed_per_layer / expert_split;
    out.gemm_expert = out.expert;
  }
  if (s.has_embedding) out.dense += c.embedding / t;
  out.layers = static_cast<double>(s.layers);
  if (s.has_output_head) {
    // A tied head lives on the last stage as a second copy when the pipeline splits them.
    const double head = m.tied_embeddings ? (s.has_embedding ? 0.0 : static_cast<double>(m.vocab) * m.hidden)
                                          : c.output_head;
    out.dense += head / t + c.final_norm;
    // MTP modules sit with the output layer (Megatron-Core's default placement); an MTP layer is
    // of the last main layer's kind, so its routed experts are split like the others.
    if (m.mtp_layers > 0) {
      const bool mtp_moe = m.is_moe_layer(m.layers - 1);
      const double routed = mtp_moe ? static_cast<double>(m.mtp_layers) * routed_per_layer : 0.0;
      out.expert += routed / expert_split;
      out.gemm_expert += routed / expert_split;
      out.dense += (c.mtp - routed) / t;
      out.gemm_dense += (c.mtp - routed) / t;
      out.layers += static_cast<double>(m.mtp_layers);
    }
  }
  return out;
}

double activation_bytes_per_microbatch(const ModelSpec& m, const Plan& p, const Workload& w, const StageShape& s) {
  if (s.framework == TrainingFramework::pytorch) return eager_activation_bytes_per_microbatch(m, p, w);
  ActivationShape shape = activation_shape(p, w);
  shape.framework = s.framework;
  const double dense_layers = static_cast<double>(s.layers - s.moe_layers);
  const double moe_layers = static_cast<double>(s.moe_layers);
  auto layers_bytes = [&](const ActivationShape& a) {
    return dense_layers * layer_activation_bytes(m, a, false) + moe_layers * layer_activation_bytes(m, a, true);
  };
  double per_microbatch = layers_bytes(shape);
  const std::int64_t recomputed = s.recomputed_layers < 0 ? s.layers : std::min(s.recomputed_layers, s.layers);
  ActivationShape kept = shape;
  kept.recompute = Recompute::none;
  if (p.recompute == Recompute::full && recomputed < s.layers && s.layers > 0) {
    // Full recompute of only some layers: the rest keep their whole activations.
    const double kept_fraction = static_cast<double>(s.layers - recomputed) / static_cast<double>(s.layers);
    per_microbatch = (1.0 - kept_fraction) * per_microbatch + kept_fraction * layers_bytes(kept);
  }
  const double tokens = shape.seq * shape.micro_batch;
  const double h = static_cast<double>(m.hidden);
  const double sp_divisor = p.sequence_parallel ? static_cast<double>(p.tp) : 1.0;
  std::int64_t mtp = s.has_output_head ? m.mtp_layers : 0;
  if (mtp > 0) {
    // Each MTP module (DeepSeek-V3 §2.2): the two norm inputs (the shifted token embedding and the
    // previous depth's hidden state), their concatenation (the 2h -> h projection's input), then
    // one transformer layer of the last main layer's kind, never recomputed as a whole.
    const bool mtp_moe = m.is_moe_layer(m.layers - 1);
    const double module_inputs = (2.0 * units::kBytesBf16 * h + saved_gemm_input_bytes(shape) * 2.0 * h) / sp_divisor;
    ActivationShape mtp_shape = p.recompute == Recompute::full ? kept : shape;
    per_microbatch += static_cast<double>(mtp) * (module_inputs * tokens + layer_activation_bytes(m, mtp_shape, mtp_moe));
  }
  return per_microbatch;
}

MemoryBreakdown stage_memory(const ModelSpec& m, const Plan& p, const Workload& w,
                             const StageShape& s, const GpuSpec& gpu) {
  // A plain PyTorch loop has one stage (plan.cpp check_framework) and its own tensors.
  if (s.framework == TrainingFramework::pytorch) return eager_pytorch_memory(m, p, w, gpu);
  if (s.framework == TrainingFramework::megatrain) return layer_streaming_memory(m, p, w, gpu);
  MemoryBreakdown mem;
  const StageParameters params = stage_parameters(m, p, s);
  const bool torchtitan = s.framework == TrainingFramework::torchtitan;
  // Dense gradients are reduced (and their state sharded) over dp x cp; expert ones over the
  // expert-data-parallel ranks of the folded expert layout.
  const double dp = static_cast<double>(p.dp * p.cp);
  const double edp = std::max<double>(1.0, static_cast<double>(p.expert_dp()));
  const double sharded_params = params.dense / dp + params.expert / edp;
  const double total_params = params.total();
  const double gemm_params = params.gemm_dense + params.gemm_expert;
  const double sharded_gemm = params.gemm_dense / dp + params.gemm_expert / edp;
  // 16-bit weights with the FP8 copies of the GEMM weights, for a set of parameters. torchao's
  // Float8Linear (torchtitan) casts weights per use and caches no FP8 copy.
  const double w_gemm = torchtitan ? kWeightBytesPerParam : gemm_weight_bytes(p);
  auto weight_bytes = [&](double all, double gemm) { return kWeightBytesPerParam * (all - gemm) + w_gemm * gemm; };

  // ZeRO-3 variants (memory_model.h).
  const bool zero3 = p.zero == OptimizerSharding::zero3;
  const bool zero3_resident = zero3 && !p.reshard_after_forward && p.pp > 1;
  const bool zero3_kept_to_backward = zero3 && !p.reshard_after_forward && p.pp == 1;
  const bool zero3_sharded = zero3 && !zero3_resident;
  if (zero3_sharded) {
    // The persistent shard: Megatron-FSDP keeps a 16-bit (or FP8) shard besides the fp32 master;
    // FSDP2's sharded parameter is the master itself (in optimizer_bytes).
    const double shard_gemm_bytes = p.precision == Precision::fp8 && p.fp8_param_gather ? units::kBytesFp8 : kWeightBytesPerParam;
    mem.weights_bytes = fsdp2_framework(s.framework) ? 0.0 : kWeightBytesPerParam * (sharded_params - sharded_gemm) + shard_gemm_bytes * sharded_gemm;
  } else {
    mem.weights_bytes = weight_bytes(total_params, gemm_params);
  }
  const bool shard_grads = p.zero == OptimizerSharding::zero2 || zero3_sharded;
  // What carries gradients and optimizer state: every parameter, or only the adapters, whose
  // frozen base weights are 16-bit (LoRA) or NF4 for the linear layers (QLoRA).
  const TrainableState trainable = trainable_state(m, p, s, params);
  auto trainable_local = [&](bool sharded) { return sharded ? trainable.dense / dp + trainable.expert / edp : trainable.all(); };
  const double optimizer_params = trainable_local(p.zero != OptimizerSharding::none);
  if (p.tuning.adapters()) {
    const double base = zero3_sharded ? 1.0 / dp : 1.0;  // frozen weights are sharded under ZeRO-3 too
    mem.weights_bytes = base * frozen_weight_bytes(p, total_params, gemm_params) + kWeightBytesPerParam * trainable_local(zero3_sharded);
  }
  mem.gradients_bytes = kGradBytesPerParam * trainable_local(shard_grads);
  mem.optimizer_bytes = kOptimizerBytesPerParam * optimizer_params;
  if (zero3_sharded && params.layers > 0) {
    const double per_layer_params = total_params / params.layers;
    const double per_layer_gemm = gemm_params / params.layers;
    const double per_layer_weights = p.tuning.adapters() ? frozen_weight_bytes(p, per_layer_params, per_layer_gemm)
                                                         : weight_bytes(per_layer_params, per_layer_gemm);
    const double all_weights = p.tuning.adapters() ? frozen_weight_bytes(p, total_params, gemm_params)
                                                   : weight_bytes(total_params, gemm_params);
    const double gathered = zero3_kept_to_backward ? all_weights : kZero3GatheredLayers * per_layer_weights;
    mem.buffers_bytes = gathered + kZero3GatheredLayers * kGradBytesPerParam * trainable.all() / params.layers;
  }

  const double per_microbatch = activation_bytes_per_microbatch(m, p, w, s);
  ActivationShape shape = activation_shape(p, w);
  shape.framework = s.framework;
  const std::int64_t recomputed = s.recomputed_layers < 0 ? s.layers : std::min(s.recomputed_layers, s.layers);
  ActivationShape kept = shape;
  kept.recompute = Recompute::none;
  const double tokens = shape.seq * shape.micro_batch;
  const double h = static_cast<double>(m.hidden);
  const double sp_divisor = p.sequence_parallel ? static_cast<double>(p.tp) : 1.0;
  const std::int64_t mtp = s.has_output_head ? m.mtp_layers : 0;
  mem.activations_bytes = per_microbatch * s.inflight_microbatches;
  if (p.recompute == Recompute::full && recomputed > 0) {
    // Backward re-runs one layer's forward at a time and holds its full activations.
    mem.activations_bytes += layer_activation_bytes(m, kept, s.moe_layers > 0);
  }
  if (s.has_output_head) {
    const double logit_elements = tokens * static_cast<double>(m.vocab) / static_cast<double>(p.tp);
    mem.logits_bytes = logit_elements * (logit_bytes_per_element(p, torchtitan) + kMtpLogitBytes * static_cast<double>(mtp));
    // torch.distributed.pipelining's last stage appends every micro-batch's output (the 16-bit
    // logits of its vocabulary shard) to output_chunks and keeps them to the end of the step
    // (pytorch 0138610, torch/distributed/pipelining/stage.py forward_one_chunk; torchtitan
    // 9dec370 train.py does not free them on the pipelined path).
    if (torchtitan && p.pp > 1)
      mem.logits_bytes += logit_elements * units::kBytesBf16 * static_cast<double>(p.microbatches(w));
    // The final norm's input and the output layer's input (PyTorch tensor parallelism saves the
    // all-gathered one over the whole sequence; Megatron the sequence-parallel shard).
    mem.logits_bytes += tokens * units::kBytesBf16 * h * (1.0 / sp_divisor + (torchtitan ? 1.0 : 1.0 / sp_divisor));
  }
  if (s.moe_layers > 0 || (mtp > 0 && m.is_moe()))
    mem.buffers_bytes += moe_dispatch_buffer_bytes(m, shape, p.dispatcher, p.ep);
  if (p.offload.any_offload()) {
    const double layers = std::max<double>(1.0, static_cast<double>(s.layers));
    move_offloaded_state(mem, p, {optimizer_params, per_microbatch / layers, per_microbatch * s.inflight_microbatches});
  }
  mem.framework_bytes = runtime_reserve_bytes(p) + measured_reserve_bytes(gpu) +
                        kAllocatorFragmentationFraction * (mem.activations_bytes + mem.logits_bytes + mem.buffers_bytes);
  return mem;
}

}  // namespace tessera
