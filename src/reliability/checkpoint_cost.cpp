#include "reliability/checkpoint_cost.h"

#include <algorithm>

#include "core/checks.h"
#include "core/units.h"
#include "cost/memory_model.h"
#include "model/parameter_count.h"

namespace tessera {

void StorageSpec::validate() const {
  require_positive_real("storage.write_gbps", write_gbps, kMaxStorageGbps);
  require_positive_real("storage.read_gbps", read_gbps, kMaxStorageGbps);
  require_positive_real("storage.node_write_gbps", node_write_gbps, kMaxStorageGbps);
  require_positive_real("storage.device_to_host_gbps", device_to_host_gbps, kMaxStorageGbps);
}

namespace {

// Ranks of one node that hold a weight-writing rank of data-parallel rank 0. Rank order is tp
// (innermost), cp, dp, pp: each pipeline stage spans tp x cp x dp consecutive ranks and its
// writers are its first tp; a node holds several stages' writers when a stage is narrower.
std::int64_t writers_per_node(const Plan& p, std::int64_t gpus_per_node) {
  const std::int64_t stage_width = p.tp * p.cp * p.dp;
  const std::int64_t stages_per_node = std::max<std::int64_t>(1, gpus_per_node / stage_width);
  return std::min(gpus_per_node, std::min(p.tp, gpus_per_node) * stages_per_node);
}

}  // namespace

CheckpointCost checkpoint_cost(const ModelSpec& model, const Plan& plan, std::int64_t gpus_per_node,
                               const StorageSpec& storage, const CheckpointSave& save) {
  storage.validate();
  require_positive("gpus_per_node", gpus_per_node);
  const double params = count_parameters(model).total();
  const auto gpus = static_cast<double>(plan.gpus());
  const std::int64_t node_gpus = std::min(gpus_per_node, plan.gpus());
  CheckpointCost c;
  c.weight_bytes = params * kWeightBytesPerParam;
  c.optimizer_bytes = params * kOptimizerBytesPerParam;
  c.total_bytes = c.weight_bytes + c.optimizer_bytes;
  if (save.fully_parallel) {
    c.writers = plan.gpus();
    c.max_rank_bytes = c.total_bytes / gpus;
    c.max_node_bytes = c.max_rank_bytes * static_cast<double>(node_gpus);
  } else {
    const std::int64_t model_parallel = plan.tp * plan.pp;
    c.writers = model_parallel;
    const bool sharded = plan.zero != OptimizerSharding::none;
    const double writer_bytes = (c.weight_bytes + (sharded ? 0.0 : c.optimizer_bytes)) / static_cast<double>(model_parallel);
    const double shard_bytes = sharded ? c.optimizer_bytes / gpus : 0.0;
    c.max_rank_bytes = writer_bytes + shard_bytes;
    c.max_node_bytes = writer_bytes * static_cast<double>(writers_per_node(plan, node_gpus)) +
                       shard_bytes * static_cast<double>(node_gpus);
  }
  const double file_system_s = c.total_bytes / (storage.write_gbps * units::kGB);
  const double node_s = c.max_node_bytes / (storage.node_write_gbps * units::kGB);
  c.write_s = std::max(file_system_s, node_s);
  c.blocking_s = save.async ? c.max_rank_bytes / (storage.device_to_host_gbps * units::kGB) : c.write_s;
  c.load_s = c.total_bytes / (storage.read_gbps * units::kGB);
  return c;
}

}  // namespace tessera
