#include "calibrate/measurement.h"

#include "core/checks.h"
#include "core/error.h"
#include "core/units.h"
#include "cost/collective_cost.h"
#include "cost/compute_cost.h"
#include "cost/cost_model.h"
#include "hardware/physical_ranges.h"
#include "model/flops.h"

namespace tessera {

Cluster cluster_for(const GpuSpec& gpu, const ClusterShape& shape) {
  return make_cluster(gpu, shape.gpus, shape.gpus_per_node, shape.network_gbps_per_gpu);
}

std::string_view collective_kind_name(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::all_reduce: return "all_reduce";
    case CollectiveKind::all_gather: return "all_gather";
    case CollectiveKind::reduce_scatter: return "reduce_scatter";
    case CollectiveKind::all_to_all: return "all_to_all";
    case CollectiveKind::send_recv: return "send_recv";
  }
  return "all_reduce";
}

namespace {

void check_run(const RunMeasurement& run) {
  require_in_range(run.id + ".step_time_s", run.iteration_time_s, physical::kMinStepTimeS, physical::kMaxStepTimeS, "s");
  if (run.peak_memory_gib)
    require_in_range(run.id + ".peak_memory_gib", *run.peak_memory_gib, 0.0, run.gpu.hbm_gib,
                     "GiB (" + run.gpu.key + "'s HBM)");
}

void check_collective(const CollectiveMeasurement& c) {
  require_in_range(c.id + ".time", c.time_s, physical::kMinFixedTimeS, physical::kMaxCollectiveTimeS, "s");
}

void check_gemm(const GemmMeasurement& g) {
  const double peak_tflops = g.gpu.peak_flops(g.fp8) / 1e12;
  if (g.fp8 && peak_tflops <= 0)
    throw Error(g.id + ".dtype", "an fp8 GEMM on " + g.gpu.key + ", which has no FP8 tensor cores",
                "bf16 rows for this GPU (fp8 on GPUs with an FP8 peak in `tessera gpus`)");
  require_in_range(g.id + ".tflops", g.tflops, physical::kMinTflops, peak_tflops, "TFLOP/s (" + g.gpu.key + "'s peak)");
}

// A kernel or attention call: 1 ns .. the longest collective (a call of hours is no call).
void check_call(const std::string& id, double time_s) {
  require_in_range(id + ".time", time_s, physical::kMinFixedTimeS, physical::kMaxCollectiveTimeS, "s");
}

}  // namespace

void check_physical(const CalibrationData& data) {
  for (const RunMeasurement& run : data.runs) check_run(run);
  for (const CollectiveMeasurement& c : data.collectives) check_collective(c);
  for (const GemmMeasurement& g : data.gemms) check_gemm(g);
  for (const AttentionMeasurement& a : data.attention) check_call(a.id, a.time_s);
  for (const KernelMeasurement& k : data.kernels) check_call(k.id, k.time_s);
}

std::int64_t prediction_work(const RunMeasurement& run) {
  return kEstimateBaseOps + 2 * run.plan.pp * run.plan.vpp * run.plan.microbatches(run.workload);
}

double predict_iteration_time_s(const RunMeasurement& run, const GpuSpec& gpu) {
  return estimate(run.model, cluster_for(gpu, run.shape), run.plan, run.workload).iteration_time_s;
}

double predict_peak_memory_gib(const RunMeasurement& run, const GpuSpec& gpu) {
  return estimate(run.model, cluster_for(gpu, run.shape), run.plan, run.workload).peak_memory_bytes / units::kGiB;
}

double predict_collective_time_s(const CollectiveMeasurement& c, const GpuSpec& gpu) {
  const std::int64_t per_node = c.gpus_per_node > 0 ? c.gpus_per_node : gpu.gpus_per_node;
  const Cluster cluster = make_cluster(gpu, c.nodes * per_node, per_node, c.network_gbps_per_gpu);
  const std::int64_t ranks = cluster.gpus();
  const GroupLink ring = group_link(cluster, 1, ranks);
  switch (c.kind) {
    case CollectiveKind::all_reduce: return all_reduce_time_s(c.bytes, ranks, ring);
    case CollectiveKind::all_gather: return all_gather_time_s(c.bytes, ranks, ring);
    case CollectiveKind::reduce_scatter: return reduce_scatter_time_s(c.bytes, ranks, ring);
    case CollectiveKind::all_to_all: return expert_all_to_all_time_s(c.bytes, ranks, 1, cluster);
    case CollectiveKind::send_recv: {
      // nccl-tests' sendrecv sends to the next rank: across a node boundary on multi-node runs.
      const GroupLink link = cluster.nodes > 1 ? group_link(cluster, cluster.gpus_per_node, 2) : ring;
      return p2p_time_s(c.bytes, link);
    }
  }
  return 0.0;
}

double predict_gemm_tflops(const GemmMeasurement& g, const GpuSpec& gpu) {
  const double time_s = g.groups > 1 ? grouped_gemm_time_s(g.m, g.n, g.k, g.groups, gpu, g.fp8)
                                     : gemm_time_s(g.m, g.n, g.k, 1.0, gpu, g.fp8);
  return 2.0 * g.groups * g.m * g.n * g.k / time_s / 1e12;
}

double predict_attention_time_s(const AttentionMeasurement& a, const GpuSpec& gpu) {
  // Scores and values, 2 FLOPs per multiply-add each, over the keys each query sees (model/flops.cpp).
  const double span = a.causal ? causal_attention_span(static_cast<std::int64_t>(a.seq), 0) : a.seq;
  const double flops = 2.0 * a.batch * a.seq * a.heads * (2.0 * a.head_dim) * span;
  const double forward_s = attention_time_s(flops, AttentionCall{a.batch * a.heads, a.seq, a.head_dim}, gpu);
  return a.backward ? (1.0 + kFlashBackwardOverForward) * forward_s : forward_s;
}

double predict_kernel_time_s(const KernelMeasurement& k, const GpuSpec& gpu) {
  const double host_s = k.kernels * gpu.host_op_dispatch_s;
  if (k.host_only) return host_s;
  const double gpu_s = memory_bound_time_s(k.bytes, gpu) + k.kernels * gpu.kernel_overhead_s;
  return host_bound_time_s(gpu_s, host_s, gpu.host_overlap_exponent);
}

}  // namespace tessera
