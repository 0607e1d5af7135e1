#include "hardware/gpu_spec.h"

#include "core/checks.h"
#include "hardware/physical_ranges.h"

namespace tessera {

namespace {
using namespace physical;

void require_efficiency(const std::string& field, double value) {
  require_in_range(field, value, kMinEfficiency, kMaxEfficiency, "(a fraction of the peak)");
}
}  // namespace

void GpuSpec::validate() const {
  if (key.empty()) throw Error("gpu.key", "empty", "a catalog key such as h100-sxm-80gb");
  for (const auto& alias : aliases)
    if (alias.empty()) throw Error("gpu." + key + ".aliases", "an empty alias", "non-empty names");
  const std::string p = "gpu." + key + ".";
  require_in_range(p + "bf16_tflops", bf16_tflops, kMinTflops, kMaxTflops, "TFLOP/s");
  if (fp8_tflops != 0) require_in_range(p + "fp8_tflops", fp8_tflops, kMinTflops, kMaxTflops, "TFLOP/s (0: none)");
  require_in_range(p + "hbm_gib", hbm_gib, kMinMemoryGib, kMaxMemoryGib, "GiB");
  require_in_range(p + "hbm_tbps", hbm_tbps, kMinHbmTbps, kMaxHbmTbps, "TB/s");
  require_in_range(p + "nvlink_gbps", nvlink_gbps, kMinBandwidthGbps, kMaxBandwidthGbps, "GB/s");
  require_positive(p + "gpus_per_node", gpus_per_node, kMaxGpusPerNode);
  require_in_range(p + "network_gbps_per_gpu", network_gbps_per_gpu, kMinBandwidthGbps, kMaxBandwidthGbps, "Gbit/s");
  require_efficiency(p + "gemm_efficiency", gemm_efficiency);
  require_efficiency(p + "fp8_gemm_efficiency", fp8_gemm_efficiency);
  require_in_range(p + "gemm_half_dim", gemm_half_dim, kMinGemmHalfDim, kMaxGemmHalfDim, "elements");
  require_efficiency(p + "attention_efficiency", attention_efficiency);
  require_efficiency(p + "hbm_efficiency", hbm_efficiency);
  require_efficiency(p + "nvlink_efficiency", nvlink_efficiency);
  require_efficiency(p + "network_efficiency", network_efficiency);
  require_in_range(p + "usable_memory_gib", usable_memory_gib, kMinMemoryGib, hbm_gib, "GiB, at most hbm_gib");
}

}  // namespace tessera
