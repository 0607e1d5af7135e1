#include "adapt/reconfiguration_cost.h"

#include "adapt/plan_family.h"
#include "cost/memory_model.h"
#include "model/parameter_count.h"

namespace tessera {

ReconfigurationCost reconfiguration_cost(const ModelSpec& model, const Cluster& cluster) {
  ReconfigurationCost c;
  c.checkpoint_bytes = count_parameters(model).total() * (kWeightBytesPerParam + kOptimizerBytesPerParam);
  const double storage_bytes_per_s = kCheckpointBytesPerSPerGpu * static_cast<double>(cluster.gpus());
  c.plan_change_s = 2.0 * c.checkpoint_bytes / storage_bytes_per_s + kRestartTimeS;  // save + load
  return c;
}

double switch_time_s(const ReconfigurationCost& cost, const Plan& from, std::int64_t from_batch, const Plan& to,
                     std::int64_t to_batch) {
  if (!same_plan(from, to)) return cost.plan_change_s;
  return from_batch == to_batch ? 0.0 : cost.batch_change_s;
}

}  // namespace tessera
