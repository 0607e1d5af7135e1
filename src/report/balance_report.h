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
#include "balance/per_batch_stream.h"

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

// `tessera balance --per-batch-cp`: the static plan against per-batch cp on one stream, as a table
// or with --json one document
//   {"schema_version", "kind": "per_batch_cp", "mixes": [{"name", "weight"}], "mix_per_sequence",
//    "gpus", "gpus_per_node", "steps", "step_tokens", "seed", "model", "gpu", "recompute",
//    "max_tokens_per_gpu", "microbatches", "samples", "tokens",
//    "static": [{"cp", "time_s"}] (time_s null where a micro-batch does not fit), "best_static_cp",
//    "static_time_s", "per_batch_time_s", "lower_bound_time_s", "static_tokens_per_s",
//    "per_batch_tokens_per_s", "gain", "gain_bound", "heterogeneous_steps",
//    "microbatches_at_cp": {"<cp>": count}, "decision_ms": {"mean", "p99", "max"}}
struct PerBatchCpReport {
  std::vector<WeightedMix> mixes;
  bool mix_per_sequence = false;
  std::int64_t gpus = 0, gpus_per_node = 0, steps = 0, step_tokens = 0;
  std::uint64_t seed = 0;
  std::string model, gpu, recompute;
  std::int64_t max_tokens_per_gpu = 0;
  PerBatchStreamResult result;
};

nlohmann::json per_batch_cp_report_to_json(const PerBatchCpReport& report);
std::string per_batch_cp_report_to_table(const PerBatchCpReport& report);

}  // namespace tessera
