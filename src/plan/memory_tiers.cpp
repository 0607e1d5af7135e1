#include "plan/memory_tiers.h"

#include "core/error.h"

namespace tessera {

const char* to_string(MemoryTier value) {
  switch (value) {
    case MemoryTier::gpu: return "gpu";
    case MemoryTier::cpu: return "cpu";
    case MemoryTier::nvme: return "nvme";
  }
  return "?";
}

MemoryTier parse_memory_tier(const std::string& field, const std::string& text) {
  if (text == "gpu" || text == "none") return MemoryTier::gpu;
  if (text == "cpu") return MemoryTier::cpu;
  if (text == "nvme") return MemoryTier::nvme;
  throw Error(field, "unknown tier '" + text + "'", "gpu (or none), cpu, nvme");
}

}  // namespace tessera
