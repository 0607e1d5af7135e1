#include "calibrate/calibration_parameter.h"

#include <array>

#include "hardware/physical_ranges.h"

namespace tessera {

namespace {
// Bounds: what hardware can physically do, not what fits the data. Efficiencies below ~0.1 would
// mean a broken GPU or link (then the profile should say so, not hide it inside a bound) and
// above ~0.95 exceed what any published kernel sustains (MAMF: ~0.86 of peak on A100, S. Bekman,
// ml-engineering, "Maximum Achievable Matmul FLOPS"); NCCL bus bandwidth can reach the link rate
// (efficiency 1), and an all-to-all over NVSwitch can beat a ring (up to 2x). Latencies span
// 0.5 us (NVLink, one hop) to 1 ms (a congested scale-out network); host dispatch 1-200 us per
// operator (CUDA graphs to a slow Python host).
constexpr std::array kParameters = {
    CalibrationParameter{"gemm_efficiency", &GpuSpec::gemm_efficiency, 0.2, 0.95, ParameterTerm::compute,
                         "GEMM time: sustained fraction of the 16-bit peak on large GEMMs"},
    CalibrationParameter{"host_op_dispatch_s", &GpuSpec::host_op_dispatch_s, 1e-6, 200e-6, ParameterTerm::host,
                         "host-bound layers: CPU dispatch time per operator"},
    CalibrationParameter{"host_overlap_exponent", &GpuSpec::host_overlap_exponent, physical::kMinHostOverlapExponent,
                         physical::kMaxHostOverlapExponent, ParameterTerm::host,
                         "host-bound layers: how host dispatch and GPU work overlap (smooth maximum)"},
    CalibrationParameter{"gemm_half_dim", &GpuSpec::gemm_half_dim, 8.0, 2048.0, ParameterTerm::compute,
                         "GEMM shape curve: dimension that halves efficiency"},
    CalibrationParameter{"attention_efficiency", &GpuSpec::attention_efficiency, 0.1, 0.9, ParameterTerm::compute,
                         "fused attention time: sustained fraction of the peak"},
    CalibrationParameter{"fp8_gemm_efficiency", &GpuSpec::fp8_gemm_efficiency, 0.2, 0.95, ParameterTerm::compute,
                         "FP8 GEMM time: sustained fraction of the FP8 peak"},
    CalibrationParameter{"kernel_overhead_s", &GpuSpec::kernel_overhead_s, 0.5e-6, 50e-6, ParameterTerm::compute,
                         "fixed time per kernel (launch, last wave)"},
    CalibrationParameter{"hbm_efficiency", &GpuSpec::hbm_efficiency, 0.3, 0.95, ParameterTerm::compute,
                         "memory-bound kernels: sustained fraction of HBM bandwidth"},
    CalibrationParameter{"moe_dispatch_efficiency", &GpuSpec::moe_dispatch_efficiency, 0.05, 4.0,
                         ParameterTerm::compute, "MoE routing and permutation kernels: speed relative to the model"},
    CalibrationParameter{"nvlink_efficiency", &GpuSpec::nvlink_efficiency, 0.1, 1.0, ParameterTerm::communication,
                         "collectives inside a node: NCCL bus bandwidth / NVLink rate"},
    CalibrationParameter{"nvlink_latency_s", &GpuSpec::nvlink_latency_s, 0.5e-6, 1e-3, ParameterTerm::communication,
                         "collectives inside a node: latency per ring step"},
    CalibrationParameter{"network_efficiency", &GpuSpec::network_efficiency, 0.1, 1.0, ParameterTerm::communication,
                         "collectives across nodes: NCCL bus bandwidth / NIC line rate"},
    CalibrationParameter{"network_latency_s", &GpuSpec::network_latency_s, 0.5e-6, 1e-3, ParameterTerm::communication,
                         "collectives across nodes: latency per ring step"},
    CalibrationParameter{"all_to_all_efficiency", &GpuSpec::all_to_all_efficiency, 0.05, 2.0,
                         ParameterTerm::communication, "all-to-all (expert dispatch): bus bandwidth / the tier's ring bus bandwidth"},
    CalibrationParameter{"memory_reserve_gib", &GpuSpec::memory_reserve_gib, -physical::kMaxNegativeReserveGib,
                         physical::kMaxMemoryGib, ParameterTerm::memory,
                         "peak memory: measured reserve beyond the model's (allocator, framework)"},
};
}  // namespace

std::string_view parameter_term_name(ParameterTerm term) {
  switch (term) {
    case ParameterTerm::compute: return "compute";
    case ParameterTerm::host: return "host";
    case ParameterTerm::communication: return "communication";
    case ParameterTerm::memory: return "memory";
  }
  return "compute";
}

std::span<const CalibrationParameter> calibration_parameters() { return kParameters; }

const CalibrationParameter* find_calibration_parameter(std::string_view name) {
  for (const auto& p : kParameters)
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace tessera
