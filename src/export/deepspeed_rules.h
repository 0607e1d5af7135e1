// DeepSpeed's own checks on a config JSON, as one table. The config is read back into a view
// (parse_deepspeed_config), independently of the writer, so the table checks what was written.
// Each rule restates one check of DeepSpeed at deepspeedai/DeepSpeed
// edaa7221267243c7be7fb49c5d5f5c4fb97b4641 (2026-08-22): an assert or a raise in the config classes,
// the engine or the ZeRO optimizers, a pydantic field constraint, or a setting the engine
// silently ignores (said so in the rule's message).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tessera {

// The fields of a DeepSpeed config that the rules read (defaults: DeepSpeed's).
struct DeepSpeedOffloadView {
  bool present = false;
  std::string device = "none";  // OffloadDeviceEnum: none | cpu | nvme (anything else kept as written)
  bool nvme_path = false;       // a non-null nvme_path
  double ratio = 1.0;           // offload_optimizer.ratio
};

struct DeepSpeedConfigView {
  std::optional<std::int64_t> train_batch, micro_batch, grad_accum;
  bool bf16 = false, fp16 = false;
  std::int64_t stage = 0;
  DeepSpeedOffloadView offload_optimizer, offload_param;
  // activation_checkpointing
  bool partition_activations = false, cpu_checkpointing = false, contiguous_memory = false;
  bool number_checkpoints = false;  // a non-null number_checkpoints
  // optimizer
  bool has_optimizer = false;
  std::string optimizer_type;
  bool optimizer_max_grad_norm = false;
  // What the pydantic models refuse: keys outside a section's fields ("zero_optimization.foo"),
  // values of the wrong JSON type, and sizes below their bound (Field(ge=0), ratio in [0, 1]).
  std::vector<std::string> unknown_keys;
  std::vector<std::string> type_errors;
  std::vector<std::string> out_of_range;
};

// Never throws: a field of the wrong type is listed in type_errors and keeps its default.
DeepSpeedConfigView parse_deepspeed_config(const nlohmann::json& config);

// What the config runs on: DeepSpeed's data-parallel world (the batch arithmetic's world_size,
// mpu.get_data_parallel_world_size()), the pipeline stages the script's PipelineModule builds, and
// whether the device has BF16 (accelerator is_bf16_supported()).
struct DeepSpeedTopology {
  std::int64_t dp = 1;
  std::int64_t pp = 1;
  bool bf16_supported = true;
};

struct DeepSpeedRule {
  const char* id;
  const char* source;  // file :: function (commit above)
  bool (*violated)(const DeepSpeedConfigView&, const DeepSpeedTopology&);
  const char* message;
};

std::span<const DeepSpeedRule> deepspeed_rules();
// The rules the config breaks (empty = DeepSpeed accepts it).
std::vector<const DeepSpeedRule*> deepspeed_violations(const nlohmann::json& config, const DeepSpeedTopology& topology);

}  // namespace tessera
