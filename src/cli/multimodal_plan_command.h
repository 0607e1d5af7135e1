// `tessera plan` for a multimodal model (or with --data / --trace): per-module GPU groups against
// the monolithic and colocated layouts (search/multimodal_planner.h); the recommended strategy is
// printed first, traced (--trace), emitted (--emit megatron, when one Megatron job can run it) and
// drawn (--html).
#pragma once

#include <cstdint>
#include <string>

#include "cli/subcommands.h"
#include "formats/calibration_profile_json.h"

namespace tessera::cli {

// What `plan` was given, for a multimodal model.
struct MultimodalRequest {
  std::string model, cluster, data, trace, fix, emit, html;
  std::int64_t gbs = 0, seq = 0, top = 0, seed = 0;
  double max_memory_gib = 0;
  bool json = false;
  LinkOverrides links;
};

// Checks the request's flags (those that mean nothing here are refused), searches and prints.
int run_multimodal_plan(const MultimodalRequest& r, const CommandOutput& io);

}  // namespace tessera::cli
