#include "cost/offload_time.h"

#include <algorithm>

#include "cost/layer_streaming.h"

namespace tessera {

namespace {
constexpr double kGiga = 1e9;
constexpr double kBytes16 = 2.0;  // a bf16 / fp16 element
constexpr double kBytes32 = 4.0;  // an fp32 element

}  // namespace

double cpu_optimizer_step_s(const Plan& p, const Cluster& c, double optimizer_params) {
  const double node_params = optimizer_params * gpus_sharing_node(c);
  const double compute_s = node_params / (c.gpu.host.cpu_adam_gparams_per_s * kGiga);
  if (p.offload.optimizer != MemoryTier::nvme) return compute_s;
  const double io_s = kNvmeOptimizerBytesPerParam * node_params / (c.gpu.host.nvme_gbps * kGiga);
  return std::max(compute_s, io_s);
}

namespace {

// The optimizer's copies: gradients down during the last backward, parameters back up after.
double optimizer_copies_exposed_s(const Cluster& c, const OffloadTraffic& t) {
  const double rate = tier_bytes_per_s(c, MemoryTier::cpu);
  const double down_s = t.grad_bytes_per_param * t.optimizer_params / rate;
  const double up_s = t.upload_bytes_per_param * t.optimizer_params / rate;
  return std::max(0.0, down_s - t.last_backward_s) + up_s;
}

// Per micro-batch: offloaded weights in and activations out and back, on one copy engine.
double microbatch_copies_exposed_s(const Plan& p, const Cluster& c, const OffloadTraffic& t) {
  double copy_s = 0;
  if (p.offload.params != MemoryTier::gpu) copy_s += t.param_bytes_per_microbatch / tier_bytes_per_s(c, p.offload.params);
  if (p.offload.activations != MemoryTier::gpu)
    copy_s += t.activation_bytes_per_microbatch / tier_bytes_per_s(c, p.offload.activations);
  return t.microbatches * std::max(0.0, copy_s - t.microbatch_compute_s);
}
}  // namespace

OffloadTraffic offload_traffic(const Plan& p, const OffloadShares& shares, double microbatch_compute_s,
                               double last_backward_s, double microbatches) {
  const bool deepspeed = deepspeed_engine(p.framework);
  const bool fsdp = !deepspeed && p.framework != TrainingFramework::megatron;
  const bool params_offloaded = p.offload.params != MemoryTier::gpu;
  OffloadTraffic t;
  t.optimizer_params = shares.optimizer_params;
  t.microbatch_compute_s = microbatch_compute_s;
  t.last_backward_s = last_backward_s;
  t.microbatches = microbatches;
  if (p.framework == TrainingFramework::megatrain) {
    // bf16 layer weights in for each of a layer's forward passes; the bf16 gradients go out the
    // other way of the full-duplex link, in less time, and the CPU adds them while backward runs.
    t.param_bytes_per_microbatch = kMegatrainForwardPasses * kBytes16 * shares.weight_shard_params;
    return t;
  }
  t.grad_bytes_per_param = params_offloaded ? 0.0 : (deepspeed ? kBytes16 : kBytes32);
  t.upload_bytes_per_param = fsdp ? 0.0 : kBytes16;
  if (params_offloaded) {
    const double gathers = p.reshard_after_forward ? 2.0 : 1.0;
    const double copy_bytes = fsdp ? kBytes32 : kBytes16;
    t.param_bytes_per_microbatch = (gathers * shares.weight_shard_params + shares.optimizer_params) * copy_bytes;
  }
  t.activation_bytes_per_microbatch = 2.0 * shares.activation_bytes_per_microbatch;
  return t;
}

double gpus_sharing_node(const Cluster& c) {
  return static_cast<double>(std::min(c.gpus_per_node, c.gpus()));
}

double tier_bytes_per_s(const Cluster& c, MemoryTier tier) {
  const double link = c.gpu.host.link_gbps * kGiga;
  if (tier != MemoryTier::nvme) return link;
  return std::min(link, c.gpu.host.nvme_gbps * kGiga / gpus_sharing_node(c));
}

double offload_exposed_s(const Plan& p, const Cluster& c, const OffloadTraffic& t) {
  const double optimizer_s = p.offload.optimizer != MemoryTier::gpu ? optimizer_copies_exposed_s(c, t) : 0.0;
  return optimizer_s + microbatch_copies_exposed_s(p, c, t);
}

}  // namespace tessera
