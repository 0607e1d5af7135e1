// Time of offloaded state (plan/memory_tiers.h) on the critical path of one iteration.
// - The optimizer step on the host CPU: the node's CPU updates the optimizer shards of all its
//   GPUs (DeepSpeed CPU Adam, ZeRO-Offload Ren et al. ATC'21 §4.3), at the node's measured rate
//   (HostSpec::cpu_adam_gparams_per_s). From NVMe the shard is read and written back (fp32 master
//   and two moments with the fp32 gradient, 16 B read and 12 B written per parameter), overlapped with the CPU step (ZeRO-Infinity,
//   Rajbhandari et al. SC'21 §6.3 "overlap-centric design"): the slower of the two.
// - Gradients copied to the host for that step, streamed while backward runs (DeepSpeed offloads
//   each reduced bucket as it completes): exposed only beyond the last micro-batch's backward.
// - Updated 16-bit parameters copied back before the next forward (ZeRO-Offload without its
//   opt-in one-step delayed update; Megatron's HybridDeviceOptimizer): exposed.
// - Offloaded parameters gathered into GPU memory for every forward and backward of a
//   micro-batch, and offloaded activations copied out and back: prefetched on a copy stream, so
//   exposed only beyond the micro-batch's compute.
// Copies run at the host link's rate (HostSpec::link_gbps), from NVMe at the drives' rate shared
// by the node's GPUs when that is slower.
#pragma once

#include "hardware/cluster.h"
#include "plan/plan.h"

namespace tessera {

struct OffloadTraffic {
  double optimizer_params = 0;        // parameters of this GPU's optimizer shard
  double grad_bytes_per_param = 0;    // bytes per parameter of the gradient copied to the host
  double upload_bytes_per_param = 0;  // bytes per parameter copied back after the step (0: none)
  double param_bytes_per_microbatch = 0;       // offloaded weights gathered per micro-batch
  double activation_bytes_per_microbatch = 0;  // offloaded activations out and back per micro-batch
  double microbatch_compute_s = 0;    // forward + backward of one micro-batch on the stage
  double last_backward_s = 0;         // the last micro-batch's backward (hides the gradient copy)
  double microbatches = 1;
};


// One GPU's share of what is offloaded, for offload_traffic.
struct OffloadShares {
  double optimizer_params = 0;     // parameters of the GPU's optimizer shard
  double weight_shard_params = 0;  // parameters of its ZeRO-3 / FSDP weight shard
  double activation_bytes_per_microbatch = 0;  // activations one micro-batch saves on the stage
};
// The copies a plan's offload makes, as its framework makes them: DeepSpeed streams 16-bit
// gradient buckets down and copies 16-bit parameters back up; Megatron copies its fp32 main
// gradients; FSDP reduces offloaded gradients in fp32 and keeps its parameters (the fp32 shard)
// on the host, copying them in for every gather. Offloaded parameters are gathered before each
// forward and, re-sharded after it, again before backward; each micro-batch's reduced gradient
// shard goes back out. Activations go out in forward and come back in backward.
OffloadTraffic offload_traffic(const Plan& plan, const OffloadShares& shares, double microbatch_compute_s,
                               double last_backward_s, double microbatches);

// GPUs of the cluster that share one node's host memory, CPU and NVMe.
double gpus_sharing_node(const Cluster& cluster);
// Copy rate between a GPU and `tier`, bytes/s.
double tier_bytes_per_s(const Cluster& cluster, MemoryTier tier);
// The copies left on the critical path of an iteration, seconds.
double offload_exposed_s(const Plan& plan, const Cluster& cluster, const OffloadTraffic& traffic);
// The optimizer step on the host CPU (and NVMe) for a GPU's shard of `optimizer_params`.
double cpu_optimizer_step_s(const Plan& plan, const Cluster& cluster, double optimizer_params);

// NVMe traffic of an optimizer step per parameter: the fp32 gradient, master and two moments read
// (16 B), then master and moments written back (12 B); the gradient's own write overlaps backward.
inline constexpr double kNvmeOptimizerBytesPerParam = 16.0 + 12.0;

}  // namespace tessera
