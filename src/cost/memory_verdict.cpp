#include "cost/memory_verdict.h"

#include "core/units.h"
#include "cost/offload_time.h"

namespace tessera {

namespace {
constexpr double kBytesPerTb = 1e12;  // drives are sold in decimal terabytes
}  // namespace

void set_memory_verdict(Estimate& e, const Cluster& c, double host_bytes_per_gpu, double nvme_bytes_per_gpu) {
  const double gpus = gpus_sharing_node(c);
  e.host_memory_bytes_per_node = host_bytes_per_gpu * gpus;
  e.host_capacity_bytes_per_node = c.gpu.host.memory_gib * units::kGiB;
  e.nvme_bytes_per_node = nvme_bytes_per_gpu * gpus;
  e.nvme_capacity_bytes_per_node = c.gpu.host.nvme_tb * kBytesPerTb;
  e.fits_gpu = e.peak_memory_bytes <= e.usable_memory_bytes;
  e.fits = e.fits_gpu && offloaded_state_fits(e);
}

bool offloaded_state_fits(const Estimate& e) {
  const bool host_fits = e.host_memory_bytes_per_node == 0 || e.host_memory_bytes_per_node <= e.host_capacity_bytes_per_node;
  const bool nvme_fits = e.nvme_bytes_per_node == 0 || e.nvme_bytes_per_node <= e.nvme_capacity_bytes_per_node;
  return host_fits && nvme_fits;
}

}  // namespace tessera
