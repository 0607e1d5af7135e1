// A GPU as JSON. The catalog (data/gpus.json), `tessera gpus --json` and a user's --gpu-file share
// one format (README "GPU file"): printing a GPU and reading it back gives the same GpuSpec.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "hardware/gpu_spec.h"

namespace tessera {

// One GPU object. Unknown keys and missing required fields are Errors naming the field under
// `path`. A GPU without "family" gets kCustomGpuFamily (its efficiencies are assumed), one without
// "source" the source "custom GPU from <origin>" (origin: e.g. "file gpus/b200-like.json").
GpuSpec gpu_from_json(const nlohmann::json& j, const std::string& path, const std::string& origin);

// One GPU object, a list of them, or {"gpus": [...]} (what `tessera gpus --json` prints; the
// keys "schema_version", "about", "notes" and the catalog's commentary are allowed beside it).
std::vector<GpuSpec> gpus_from_json(const nlohmann::json& j, const std::string& origin);

nlohmann::json gpu_to_json(const GpuSpec& gpu);

// The node beside a GPU (hardware/host_spec.h) as the object "host": {"memory_gib", "link_gbps",
// "nvme_tb", "nvme_gbps", "cpu_adam_gparams_per_s", "source"}. Keys left out keep `base`'s
// values, so a cluster JSON's "host" overrides only what it names.
HostSpec host_from_json(const nlohmann::json& j, const std::string& path, HostSpec base);
nlohmann::json host_to_json(const HostSpec& host);
// {"schema_version": N, "gpus": [...]}: the document `tessera gpus --json` prints.
nlohmann::json gpus_to_json(const std::vector<GpuSpec>& gpus);

}  // namespace tessera
