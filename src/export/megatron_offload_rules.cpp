// Megatron-LM's rules on moving state out of GPU memory (Megatron-LM d98e8a64): the optimizer to
// the CPU (--optimizer-cpu-offload, the HybridDeviceOptimizer) and activations to the CPU
// (Transformer Engine's layer-level offload, --cpu-offloading-num-layers; the module-level
// --fine-grained-activation-offloading). Part of megatron_rules()'s table (megatron_rules.h),
// kept in a file of its own beside the main table.
#include "export/megatron_rules.h"

namespace tessera {
namespace {

using megatron_source::kArgs;
using megatron_source::kConfig;
constexpr const char* kGetOptimizer = "megatron/core/optimizer/__init__.py get_megatron_optimizer";
constexpr const char* kOptimizerConfig = "megatron/core/optimizer/optimizer_config.py OptimizerConfig.__post_init__";
constexpr const char* kFsdpV2Optimizer = "megatron/core/optimizer/fully_sharded_optimizer.py FullyShardedOptimizer.__init__";

// validate_args sets cpu_offloading when --cpu-offloading-num-layers > 0 (the only way on).
std::int64_t offloaded_layers(const MegatronArgs& a) { return a.integer("--cpu-offloading-num-layers", 0); }
bool cpu_offloading(const MegatronArgs& a) { return offloaded_layers(a) > 0; }

const std::vector<MegatronRule>& offload_rules() {
  using A = const MegatronArgs&;
  static const std::vector<MegatronRule> rules = {
      {"optimizer-offload-needs-precision-aware", kArgs,
       [](A a) { return a.has("--optimizer-cpu-offload") && !a.has("--use-precision-aware-optimizer"); },
       "the optimizer CPU offload must be used with --use-precision-aware-optimizer"},
      {"optimizer-offload-fp8-param-gather-delayed", kArgs,
       [](A a) {
         return a.has("--optimizer-cpu-offload") && a.has("--fp8-param-gather") && a.text("--fp8-recipe", "delayed") != "delayed";
       },
       "with --fp8-param-gather the optimizer CPU offload needs --fp8-recipe delayed"},
      {"optimizer-offload-not-fsdp-v2", kFsdpV2Optimizer,
       [](A a) {
         return a.has("--optimizer-cpu-offload") && a.megatron_fsdp() && a.integer("--megatron-fsdp-version", 1) == 2;
       },
       "Megatron-FSDP version 2 does not support the optimizer CPU offload"},
      {"precision-aware-needs-distributed-optimizer", kGetOptimizer,
       [](A a) { return a.has("--use-precision-aware-optimizer") && !a.distributed_optimizer(); },
       "--use-precision-aware-optimizer is only supported with the distributed optimizer"},
      {"precision-aware-needs-adam", kOptimizerConfig,
       [](A a) { return a.has("--use-precision-aware-optimizer") && a.text("--optimizer", "adam") != "adam"; },
       "--use-precision-aware-optimizer is only supported with adam"},
      {"cpu-offloading-layers-below-num-layers", kConfig,
       [](A a) { return cpu_offloading(a) && offloaded_layers(a) >= a.layers(); },
       "CPU offloading can be done only for fewer layers than --num-layers"},
      {"cpu-offloading-no-pp", kConfig, [](A a) { return cpu_offloading(a) && a.pp() > 1; },
       "CPU offloading does not support pipeline parallelism"},
      {"cpu-offloading-no-recompute", kConfig, [](A a) { return cpu_offloading(a) && a.has("--recompute-granularity"); },
       "CPU offloading does not work when activation recomputation is enabled"},
      {"fine-grained-offload-not-with-cpu-offloading", kConfig,
       [](A a) { return a.has("--fine-grained-activation-offloading") && cpu_offloading(a); },
       "fine-grained activation offloading cannot be enabled with cpu_offloading"},
      {"fine-grained-offload-needs-modules", kConfig,
       [](A a) { return a.has("--fine-grained-activation-offloading") && a.values("--offload-modules").empty(); },
       "fine-grained activation offloading needs --offload-modules"},
  };
  return rules;
}

}  // namespace

std::vector<MegatronRule> with_offload_rules(std::vector<MegatronRule> rules) {
  rules.insert(rules.end(), offload_rules().begin(), offload_rules().end());
  return rules;
}

}  // namespace tessera
