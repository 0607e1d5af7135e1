// tessera gpus [--json]: the built-in GPU catalog and the GPUs of --gpu-file. The JSON is the
// format a GPU file takes (README "GPU file"), so an entry can be copied, edited and read back.
#include <fmt/core.h>

#include "catalog/gpu_catalog.h"
#include "cli/subcommands.h"
#include "formats/json_fields.h"

namespace tessera::cli {

namespace {

std::vector<GpuSpec> known_gpus() {
  std::vector<GpuSpec> gpus = gpu_catalog();
  for (auto& g : user_gpus()) gpus.push_back(std::move(g));
  return gpus;
}

void print_table(const CommandOutput& io, const std::vector<GpuSpec>& gpus) {
  io.print("{:<16} {:<10} {:>9} {:>9} {:>8} {:>8} {:>10} {:>5} {:>9}  {}\n", "key", "family", "bf16_TF",
             "fp8_TF", "HBM_GiB", "HBM_TB/s", "NVLink_GB/s", "node", "NIC_Gb/s", "name");
  for (const auto& g : gpus)
    io.print("{:<16} {:<10} {:>9.1f} {:>9.1f} {:>8.0f} {:>8.2f} {:>10.0f} {:>5} {:>9.0f}  {}\n", g.key,
               g.family, g.bf16_tflops, g.fp8_tflops, g.hbm_gib, g.hbm_tbps, g.nvlink_gbps, g.gpus_per_node,
               g.network_gbps_per_gpu, g.name);
}

}  // namespace

void register_gpus(CLI::App& app, CommandRegistry& commands) {
  auto* sub = app.add_subcommand("gpus", "List the GPU catalog (and the GPUs of --gpu-file)");
  auto json = std::make_shared<bool>(false);
  sub->add_flag("--json", *json, "Print one JSON document, in the format --gpu-file reads");
  commands.add(sub, [json, &io = commands.output()]() {
    if (*json) io.print("{}\n", json_fields::to_text(gpus_to_json(known_gpus()), 2));
    else print_table(io, known_gpus());
    return 0;
  });
}

}  // namespace tessera::cli
