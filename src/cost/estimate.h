// Estimate: the predicted time and memory of one training iteration, with the breakdown that
// explains it. Every time term is seconds per iteration on the critical path.
#pragma once

namespace tessera {

struct TimeBreakdown {
  double compute_s = 0;       // GEMMs, attention, memory-bound ops of the slowest stage
  double recompute_s = 0;     // part of compute_s spent re-running forward work
  double tp_comm_s = 0;       // exposed tensor-parallel collectives
  double cp_comm_s = 0;       // exposed context-parallel K/V exchange
  double ep_comm_s = 0;       // exposed expert-parallel all-to-all
  double pp_comm_s = 0;       // exposed pipeline send/recv
  double bubble_s = 0;        // pipeline fill and drain, stage imbalance
  double dp_comm_s = 0;       // exposed gradient reduce / parameter gather
  double optimizer_s = 0;     // the optimizer step (on the host CPU when the optimizer is offloaded)
  double offload_s = 0;       // exposed copies between GPU, host memory and NVMe (plan/memory_tiers.h)
};

struct MemoryBreakdown {
  double weights_bytes = 0;
  double gradients_bytes = 0;
  double optimizer_bytes = 0;
  double activations_bytes = 0;  // in-flight micro-batches on the peak stage
  double logits_bytes = 0;       // output layer and loss (last stage)
  double buffers_bytes = 0;      // communication buffers, gathered ZeRO-3 weights
  double framework_bytes = 0;    // CUDA context, allocator reserve, workspaces
  // State the plan keeps off the GPU (plan/memory_tiers.h), per GPU: in host memory (pinned) and
  // on local NVMe. Not part of total(), which is GPU memory.
  double host_bytes = 0;
  double nvme_bytes = 0;
  double total() const {
    return weights_bytes + gradients_bytes + optimizer_bytes + activations_bytes + logits_bytes +
           buffers_bytes + framework_bytes;
  }
};

// Collectives that run beside compute: the expert all-to-all (hidden under another micro-batch's
// work with EP overlap) and ZeRO-3's per-micro-batch gathers and reduce-scatters (prefetched on
// their own streams). Their whole time per iteration on the critical stage, and the part of it
// left on the critical path; a confidence check reads how much the estimate assumes hidden.
struct HiddenCommunication {
  double ep_total_s = 0, ep_exposed_s = 0;
  double zero3_total_s = 0, zero3_exposed_s = 0;
};

struct Estimate {
  double iteration_time_s = 0;
  TimeBreakdown time;
  HiddenCommunication overlap;
  MemoryBreakdown memory;    // of the stage with the highest peak
  int peak_memory_stage = 0;
  double model_flops = 0;     // per iteration, whole job (Megatron-Core convention)
  double hardware_flops = 0;  // model FLOPs + recompute
  double tokens_per_s = 0;
  double model_tflops_per_gpu = 0;
  double hardware_tflops_per_gpu = 0;
  // One convention for every plan (issue 32: an FP8 plan's MFU against the FP8 peak could not be
  // compared with a bf16 plan's): model / hardware FLOPs over time x GPUs x the 16-bit dense peak.
  double mfu = 0;
  double hfu = 0;
  double mfu_fp8_peak = 0;  // an FP8 plan's model FLOPs against the FP8 dense peak; 0 for other plans
  double peak_memory_bytes = 0;
  double usable_memory_bytes = 0;
  // Offloaded state per node against the node's host memory and NVMe (hardware/host_spec.h).
  double host_memory_bytes_per_node = 0, host_capacity_bytes_per_node = 0;
  double nvme_bytes_per_node = 0, nvme_capacity_bytes_per_node = 0;
  bool fits_gpu = false;  // GPU memory alone
  bool fits = false;      // GPU memory, and host memory and NVMe where the plan offloads
};

}  // namespace tessera
