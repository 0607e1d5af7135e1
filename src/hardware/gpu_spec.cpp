#include "hardware/gpu_spec.h"

#include "core/checks.h"

namespace tessera {

namespace {
constexpr double kMaxTflops = 1e6;
constexpr double kMaxMemoryGib = 1e5;
constexpr double kMaxBandwidth = 1e6;
constexpr int kMaxGpusPerNode = 1024;
}  // namespace

void GpuSpec::validate() const {
  if (key.empty()) throw Error("gpu.key", "empty", "a catalog key such as h100-sxm-80gb");
  for (const auto& alias : aliases)
    if (alias.empty()) throw Error("gpu." + key + ".aliases", "an empty alias", "non-empty names");
  require_positive_real("gpu." + key + ".bf16_tflops", bf16_tflops, kMaxTflops);
  if (fp8_tflops != 0) require_positive_real("gpu." + key + ".fp8_tflops", fp8_tflops, kMaxTflops);
  require_positive_real("gpu." + key + ".hbm_gib", hbm_gib, kMaxMemoryGib);
  require_positive_real("gpu." + key + ".hbm_tbps", hbm_tbps, kMaxBandwidth);
  require_positive_real("gpu." + key + ".nvlink_gbps", nvlink_gbps, kMaxBandwidth);
  require_positive("gpu." + key + ".gpus_per_node", gpus_per_node, kMaxGpusPerNode);
  require_positive_real("gpu." + key + ".network_gbps_per_gpu", network_gbps_per_gpu, kMaxBandwidth);
  require_fraction("gpu." + key + ".gemm_efficiency", gemm_efficiency);
  require_fraction("gpu." + key + ".fp8_gemm_efficiency", fp8_gemm_efficiency);
  require_positive_real("gpu." + key + ".gemm_half_dim", gemm_half_dim, 1e5);
  require_fraction("gpu." + key + ".attention_efficiency", attention_efficiency);
  require_fraction("gpu." + key + ".hbm_efficiency", hbm_efficiency);
  require_fraction("gpu." + key + ".nvlink_efficiency", nvlink_efficiency);
  require_fraction("gpu." + key + ".network_efficiency", network_efficiency);
  require_positive_real("gpu." + key + ".usable_memory_gib", usable_memory_gib, hbm_gib);
}

}  // namespace tessera
