// HostSpec: what a GPU node offers beside its GPUs, for state offloaded out of GPU memory
// (plan/memory_tiers.h): host memory, the host <-> GPU link, local NVMe and the CPU's speed at
// the optimizer step. The catalog gives each GPU the node it ships in (data/gpus.json "host",
// each figure with its source); a cluster JSON overrides any of them (README "Cluster file").
#pragma once

#include <string>

namespace tessera {

struct HostSpec {
  double memory_gib = 0;       // host DRAM per node (0 = unknown: no CPU tier)
  double link_gbps = 0;        // host <-> GPU copy rate per GPU, one direction, GB/s, as measured
                               // with pinned memory (PCIe, or NVLink-C2C on GH200-class parts)
  double nvme_tb = 0;          // local NVMe capacity per node, TB (10^12 bytes, as drives are sold; 0 = none)
  double nvme_gbps = 0;        // local NVMe read (and write) rate per node, GB/s, all drives together
  double cpu_adam_gparams_per_s = 0;  // the node's CPU optimizer step (DeepSpeed CPU Adam), 10^9 parameters / s
  std::string source;          // where the figures come from

  bool has_cpu_tier() const { return memory_gib > 0 && link_gbps > 0 && cpu_adam_gparams_per_s > 0; }
  bool has_nvme_tier() const { return nvme_tb > 0 && nvme_gbps > 0; }
  void validate() const;  // throws tessera::Error("gpu.host.<field>", ...)
  bool operator==(const HostSpec&) const = default;
};

}  // namespace tessera
