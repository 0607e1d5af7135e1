// One planner search with the offload ladder (search/offload_search.h), for the export tests that
// check every plan the planner answers with passes its framework's rules.
#pragma once

#include <cstdint>
#include <string>

#include "catalog/gpu_catalog.h"
#include "catalog/model_source.h"
#include "search/offload_search.h"

namespace tessera::testing {

struct OffloadPlannerCase {
  const char* model;
  const char* cluster;
  std::int64_t gbs, seq;
  TrainingTask task = TrainingTask::pretrain;
};

struct PlannedOffloadCase {
  ModelSpec model;
  Cluster cluster;
  Workload workload;
  OffloadSearch found;
  std::string name() const { return model.name + " on " + cluster.gpu.key; }
};

// The five best plans of `framework` for the case; LoRA and QLoRA train rank-16 adapters.
inline PlannedOffloadCase plan_with_offload(const OffloadPlannerCase& c, TrainingFramework framework) {
  PlannedOffloadCase out{builtin_model(c.model), load_cluster(c.cluster), Workload{c.gbs, c.seq}, {}};
  PlanConstraints fix;
  fix.defaults.framework = framework;
  fix.defaults.tuning.task = c.task;
  if (fix.defaults.tuning.adapters()) fix.defaults.tuning.lora_rank = 16;
  PlannerOptions options;
  options.top_k = 5;
  out.found = search_plans_with_offload(out.model, out.cluster, out.workload, fix, options);
  return out;
}

}  // namespace tessera::testing
