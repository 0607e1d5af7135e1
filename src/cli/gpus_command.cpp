// tessera gpus [--json]: the built-in GPU catalog.
#include <fmt/core.h>

#include "cli/subcommands.h"
#include "io/gpu_catalog.h"
#include "io/schema.h"

namespace tessera::cli {

void register_gpus(CLI::App& app, CommandRegistry& commands) {
  auto* sub = app.add_subcommand("gpus", "List the built-in GPU catalog");
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print one JSON document");
  commands.add(sub, [json]() {
    if (*json) {
      nlohmann::json out = {{"schema_version", kSchemaVersion}, {"gpus", nlohmann::json::array()}};
      for (const auto& g : gpu_catalog()) out["gpus"].push_back(gpu_to_json(g));
      fmt::print("{}\n", out.dump(2));
      return 0;
    }
    fmt::print("{:<16} {:>9} {:>9} {:>8} {:>8} {:>10} {:>5} {:>9}  {}\n", "key", "bf16_TF", "fp8_TF",
               "HBM_GiB", "HBM_TB/s", "NVLink_GB/s", "node", "NIC_Gb/s", "name");
    for (const auto& g : gpu_catalog())
      fmt::print("{:<16} {:>9.1f} {:>9.1f} {:>8.0f} {:>8.2f} {:>10.0f} {:>5} {:>9.0f}  {}\n", g.key,
                 g.bf16_tflops, g.fp8_tflops, g.hbm_gib, g.hbm_tbps, g.nvlink_gbps, g.gpus_per_node,
                 g.network_gbps_per_gpu, g.name);
    return 0;
  });
}

}  // namespace tessera::cli
