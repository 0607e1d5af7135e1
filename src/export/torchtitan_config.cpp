#include "export/torchtitan_config.h"

#include <algorithm>

#include <fmt/core.h>

namespace tessera {

std::string torchtitan_toml(const ModelSpec& m, const Plan& p, const Workload& w) {
  const bool fsdp = p.zero == OptimizerSharding::zero3;
  std::string t;
  t += "# torchtitan job config written by Tessera (merge into your model's .toml)\n";
  t += "[training]\n";
  t += fmt::format("local_batch_size = {}\n", w.global_batch / p.dp);
  t += fmt::format("global_batch_size = {}\n", w.global_batch);
  t += fmt::format("seq_len = {}\n", w.seq_len);
  t += fmt::format("mixed_precision_param = \"bfloat16\"\n\n");
  t += "[parallelism]\n";
  // FSDP (ZeRO-3) shards over the data-parallel group; otherwise replicate (DDP).
  t += fmt::format("data_parallel_replicate_degree = {}\n", fsdp ? 1 : p.dp);
  t += fmt::format("data_parallel_shard_degree = {}\n", fsdp ? p.dp : 1);
  t += fmt::format("tensor_parallel_degree = {}\n", p.tp);
  t += fmt::format("enable_async_tensor_parallel = {}\n", p.overlap_tp_comm ? "true" : "false");
  t += fmt::format("pipeline_parallel_degree = {}\n", p.pp);
  if (p.pp > 1) {
    t += fmt::format("pipeline_parallel_schedule = \"{}\"\n", p.vpp > 1 ? "Interleaved1F1B" : "1F1B");
    t += fmt::format("pipeline_parallel_microbatch_size = {}\n", p.micro_batch);
    if (p.vpp > 1) t += fmt::format("pipeline_parallel_layers_per_stage = {}\n", (m.layers + p.pp * p.vpp - 1) / (p.pp * p.vpp));
  }
  t += fmt::format("context_parallel_degree = {}\n", p.cp);
  if (p.ep > 1) t += fmt::format("expert_parallel_degree = {}\n", p.ep);
  t += "\n[activation_checkpoint]\n";
  switch (p.recompute) {
    case Recompute::none: t += "mode = \"none\"\n"; break;
    case Recompute::selective: t += "mode = \"selective\"\nselective_ac_option = \"op\"\n"; break;
    case Recompute::full:
      if (p.recompute_layers > 0) {
        // torchtitan checkpoints every k-th layer: the nearest k to recomputing N of a chunk's layers.
        const std::int64_t chunk = (m.layers + p.pp * p.vpp - 1) / (p.pp * p.vpp);
        const std::int64_t every = std::max<std::int64_t>(1, (chunk + p.recompute_layers / 2) / p.recompute_layers);
        t += fmt::format("mode = \"selective\"\nselective_ac_option = \"{}\"  # full recompute of 1 in {} layers\n", every, every);
      } else {
        t += "mode = \"full\"\n";
      }
      break;
  }
  if (p.precision == Precision::fp8) t += "\n[float8]\nenable_fsdp_float8_all_gather = true\n";
  return t;
}

}  // namespace tessera
