// The coordinator's checkpoint (issue 35): what a restarted coordinator needs to resume the epoch.
// The plan is rebuilt from the index and settings (dataservice/epoch_plan.h: the same inputs give
// the same plan), so the file holds those and each rank's cursor, written atomically (a temporary
// file renamed over the old one) each time a cursor moves:
//   {"format": "tessera-data-coordinator", "protocol_version": 1, "index": PATH, "ranks": D,
//    "microbatches": M, "max_tokens": S, "method": "wlb", "seed": X, "epoch": E, "pipeline_stages": P,
//    "context_parallel": C, "cursors": [one per trainer rank]}
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "dataservice/epoch_plan.h"

namespace tessera {

struct CoordinatorCheckpoint {
  std::string index;
  EpochSettings settings;
  std::vector<std::int64_t> cursors;
};

void write_coordinator_checkpoint(const std::string& path, const CoordinatorCheckpoint& checkpoint);
// Throws Error("checkpoint...", ...) for a missing, foreign or damaged file.
CoordinatorCheckpoint read_coordinator_checkpoint(const std::string& path);

}  // namespace tessera
