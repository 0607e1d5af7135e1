// torchtitan's own checks on a job, as one table. The job is read back from the exported recipe
// text and launch command (parse_torchtitan_job), not taken from the exporter, so the table checks
// what was written. Sources: pytorch/torchtitan main @ b5bcd76c66d0acb1a08b176d9639425bc55e0b2a.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "hardware/cluster.h"

namespace tessera {

// The fields of a torchtitan recipe that its checks read (defaults: torchtitan's, config/configs.py).
struct TorchtitanJob {
  std::string module, flavor, attn_backend;
  std::int64_t num_mtp_layers = 0;
  bool float8_linear = false, float8_grouped = false, mxfp8_linear = false, mxfp8_grouped = false;
  std::string float8_recipe;  // Float8LinearConverter.Config recipe_name ("" = its default, rowwise)
  // training
  std::int64_t tokens_per_microbatch = 16384, tokens_per_step = -1, max_context = 2048;
  bool disable_cuda_graphs = false;
  bool enable_cpu_offload = false;  // training.enable_cpu_offload (FSDP2 CPUOffloadPolicy)
  // parallelism
  std::int64_t dp_replicate = 1, dp_shard = -1, tp = 1, pp = 1, cp = 1, ep = 1, num_pp_microbatches = 1;
  bool sequence_parallel = true;
  std::string reshard_after_forward = "default", schedule = "1F1B", cp_load_balancer = "headtail";
  std::vector<std::int64_t> layers_per_part;  // module_fqns_per_model_part; empty = torchtitan's split
  std::string activation_checkpoint = "SelectiveAC";  // "None", "SelectiveAC", "FullAC"
  bool compile = false, async_tp = false;
  // launch command
  std::int64_t nnodes = 0, nproc_per_node = 0;
};

// Reads a recipe written in the exporter's form (keyword arguments `key=value`) and a torchrun
// line. Missing keys keep torchtitan's defaults.
TorchtitanJob parse_torchtitan_job(const std::string& recipe_py, const std::string& launch_command);

// What the job runs on.
struct TorchtitanTarget {
  std::int64_t gpus = 0;
  bool fp8 = false;    // SM89+ / MI300 (float8.py)
  bool mxfp8 = false;  // SM100 (mx.py)
};
TorchtitanTarget torchtitan_target(const Cluster& cluster);

struct TorchtitanRule {
  const char* id;
  const char* source;  // file :: function (commit above)
  bool (*violated)(const TorchtitanJob&, const TorchtitanTarget&);
  const char* message;
};

std::span<const TorchtitanRule> torchtitan_rules();
// The rules the job breaks (empty = torchtitan accepts it).
std::vector<const TorchtitanRule*> torchtitan_violations(const TorchtitanJob& job, const TorchtitanTarget& target);

}  // namespace tessera
