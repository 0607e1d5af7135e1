// What `tessera calibrate` fits to: measurements of the user's own cluster, as plain values.
// The readers in src/formats/ (validation CSV rows, Megatron-LM / torchtitan logs, nccl-tests output,
// GEMM sweeps) produce them; `predict_*` gives the cost model's value for a GPU's parameters.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// The cluster a measurement ran on, without its GPU's parameters (those are what is fitted).
struct ClusterShape {
  std::int64_t gpus = 0;
  std::int64_t gpus_per_node = 0;     // 0 = the GPU's default node size
  double network_gbps_per_gpu = 0;    // 0 = the GPU's catalog NIC
};
Cluster cluster_for(const GpuSpec& gpu, const ClusterShape& shape);

// One training run: its steady iteration time and, where logged, its peak memory per GPU.
struct RunMeasurement {
  std::string id;  // where it comes from ("runs.csv row vtrain-single-0003", "train.log:120")
  ModelSpec model;
  GpuSpec gpu;     // the catalog entry it ran on
  ClusterShape shape;
  Plan plan;
  Workload workload;
  double iteration_time_s = 0;
  std::optional<double> peak_memory_gib;
};

enum class CollectiveKind { all_reduce, all_gather, reduce_scatter, all_to_all, send_recv };
std::string_view collective_kind_name(CollectiveKind kind);

// One row of a collective benchmark (nccl-tests): `bytes` as nccl-tests sizes it (the full
// gathered / reduced buffer; for all-to-all what one rank sends in all; for send/recv one message).
struct CollectiveMeasurement {
  std::string id;
  GpuSpec gpu;
  CollectiveKind kind = CollectiveKind::all_reduce;
  double bytes = 0;
  std::int64_t nodes = 1, gpus_per_node = 0;
  double network_gbps_per_gpu = 0;  // 0 = catalog
  double time_s = 0;
};

// One GEMM of a sweep: (m x k) * (k x n) at `tflops` achieved; `groups` > 1 is one grouped GEMM
// of that many such problems (MoE experts), `tflops` over all of them.
struct GemmMeasurement {
  std::string id;
  GpuSpec gpu;
  double m = 0, n = 0, k = 0;
  bool fp8 = false;
  double tflops = 0;
  double groups = 1;
};

// One fused-attention call: `batch` x `heads` problems of `seq` queries over `seq` keys, head width
// `head_dim`; the forward alone or forward + backward.
struct AttentionMeasurement {
  std::string id;
  GpuSpec gpu;
  double batch = 0, heads = 0, seq = 0, head_dim = 0;
  bool causal = true;
  bool backward = false;
  double time_s = 0;
};

// One memory-bound operation: `kernels` kernels moving `bytes` in all, timed per call on the wall
// clock; or (`host_only`) the host's time to issue `kernels` eager operators.
struct KernelMeasurement {
  std::string id;
  GpuSpec gpu;
  double bytes = 0, kernels = 0;
  bool host_only = false;
  double time_s = 0;
};

struct CalibrationData {
  std::vector<RunMeasurement> runs;
  std::vector<CollectiveMeasurement> collectives;
  std::vector<GemmMeasurement> gemms;
  std::vector<AttentionMeasurement> attention;
  std::vector<KernelMeasurement> kernels;
  bool empty() const { return runs.empty() && collectives.empty() && gemms.empty() && attention.empty() && kernels.empty(); }
};

// Every measurement physically possible on its GPU, else Error naming its id: a step time of
// 10 us .. 1e6 s, a peak memory within the GPU's HBM, a collective of 1 ns .. 1e4 s, a GEMM no
// faster than the GPU's peak and FP8 only on a GPU with FP8 (hardware/physical_ranges.h).
// A 1e-320 ms step would otherwise reach the fit and print "-nan%".
void check_physical(const CalibrationData& data);

// The cost model's value of each measurement with `gpu`'s parameters (same key as the measurement's).
double predict_iteration_time_s(const RunMeasurement& run, const GpuSpec& gpu);
double predict_peak_memory_gib(const RunMeasurement& run, const GpuSpec& gpu);
double predict_collective_time_s(const CollectiveMeasurement& c, const GpuSpec& gpu);
double predict_gemm_tflops(const GemmMeasurement& g, const GpuSpec& gpu);
// Fused attention as layer_cost prices it: the causal span's FLOPs at the call's efficiency, the
// backward kFlashBackwardOverForward times the forward.
double predict_attention_time_s(const AttentionMeasurement& a, const GpuSpec& gpu);
// A memory-bound call as the eager terms price it: its bytes at the GPU's streaming rate plus a
// fixed cost per kernel, against the host's dispatch of its operators (the smooth maximum of
// host_bound_time_s); a host-only row is its operators' dispatch alone.
double predict_kernel_time_s(const KernelMeasurement& k, const GpuSpec& gpu);

// What predict_iteration_time_s costs, in simulated pipeline operations: kEstimateBaseOps plus
// the 2 pp vpp m operations of its pipeline simulation. Deterministic, so callers that repeat
// predictions (calibration fits, held-out checks) bound their work with it, not with a clock.
// Measured on 2 cores here, an estimate of a one-stage run takes ~1.5 us and a simulated operation
// ~6 ns (h200/runs.csv: 32,020 estimates in 0.04 s; public_runs.csv, median 3,072 operations per
// run: 88 us per estimate).
inline constexpr std::int64_t kEstimateBaseOps = 250;
std::int64_t prediction_work(const RunMeasurement& run);

}  // namespace tessera
