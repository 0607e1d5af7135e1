#include "hardware/host_spec.h"

#include <string>

#include "core/checks.h"
#include "hardware/physical_ranges.h"

namespace tessera {

namespace {
using namespace physical;
// A figure that may be 0 (the tier is absent) or lie in [min, max].
// 1 MB: below any drive.
constexpr double kMinNvmeTb = 1e-6;
void require_absent_or_in_range(const std::string& field, double value, double min, double max, const char* unit) {
  if (value == 0.0) return;
  require_in_range(field, value, min, max, std::string(unit) + " (0: none)");
}
}  // namespace

void HostSpec::validate() const {
  const std::string p = "gpu.host.";
  require_absent_or_in_range(p + "memory_gib", memory_gib, kMinMemoryGib, kMaxHostMemoryGib, "GiB per node");
  require_absent_or_in_range(p + "link_gbps", link_gbps, kMinBandwidthGbps, kMaxBandwidthGbps, "GB/s per GPU");
  require_absent_or_in_range(p + "nvme_tb", nvme_tb, kMinNvmeTb, kMaxNvmeTb, "TB per node");
  require_absent_or_in_range(p + "nvme_gbps", nvme_gbps, kMinBandwidthGbps, kMaxBandwidthGbps, "GB/s per node");
  require_absent_or_in_range(p + "cpu_adam_gparams_per_s", cpu_adam_gparams_per_s, kMinCpuAdamGparamsPerS,
                             kMaxCpuAdamGparamsPerS, "10^9 parameters/s per node");
}

}  // namespace tessera
