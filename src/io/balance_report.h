// What `tessera balance` prints: a short table, or with --json one document
//   {"schema_version", "source", "method", "dp", "microbatches", "max_tokens", "steps", "seed",
//    "model", "gpu", "imbalance", "lower_bound", "random_imbalance", "n_in", "n_assigned",
//    "n_carried", "mean_delay_steps", "max_delay_steps", "outlier_queues", "step_time_s",
//    "time_ms", "modules": {"<name>": {"imbalance", "lower_bound", "random_imbalance"}}}
// `modules` lists the backbone, encoder and generator when their samples carry load.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "balance/load_balance.h"

namespace tessera {

struct ModuleBalance {
  std::string name;  // backbone, encoder, generator
  LoadBalance balanced;
  LoadBalance random;
};

struct BalanceReport {
  std::string source;  // "synthetic wlb-like" or the samples file
  std::string method;
  std::int64_t dp = 0, microbatches = 0, max_tokens = 0;
  std::int64_t steps = 0;  // steps run
  std::uint64_t seed = 0;
  std::string model, gpu;
  LoadBalance balanced;  // predicted time, mean over steps
  LoadBalance random;    // a random equal-count assignment of the same samples
  std::vector<ModuleBalance> modules;
  std::int64_t n_in = 0, n_assigned = 0, n_carried = 0;
  double mean_delay_steps = 0;
  int max_delay_steps = 0;
  int outlier_queues = 0;
  double step_time_s = 0;  // mean over steps of the slowest slot's predicted time
  double time_ms = 0;      // balancing only
};

nlohmann::json balance_report_to_json(const BalanceReport& report);
std::string balance_report_to_table(const BalanceReport& report);

}  // namespace tessera
