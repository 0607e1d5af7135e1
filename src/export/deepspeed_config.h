// A plan as a DeepSpeed config JSON (the `--deepspeed_config` file of deepspeed.initialize, DeepSpeed
// edaa7221): the batch arithmetic, precision, ZeRO stage with ZeRO-Offload / ZeRO-Infinity
// placement (Plan::offload), activation checkpoints on the CPU, gradient clipping and the optimizer.
// Every config passes DeepSpeed's rule table (export/deepspeed_rules.h) or is not returned.
//
// What the JSON carries and what the training script does: pipeline stages are the script's
// PipelineModule(num_stages=pp) and Megatron-DeepSpeed's tensor parallelism its launch arguments,
// so the JSON holds only their batch arithmetic (DeepSpeed's world_size is the data-parallel size);
// plain DeepSpeed's tensor parallelism is AutoTP ("tensor_parallel": {"autotp_size": tp}).
#pragma once

#include <nlohmann/json.hpp>

#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// The NVMe folder written for offload to nvme: a placeholder for the node's local NVMe mount
// (DeepSpeed creates zero_stage_3/ below it on every rank); edit it before running.
inline constexpr const char* kDeepSpeedNvmePlaceholder = "/local_nvme";

// Throws Error naming the plan key when DeepSpeed cannot express the plan (cp, fp8, ep, ZeRO-2/3
// under a pipeline, an offload DeepSpeed does not do), and Error("deepspeed", ...) if the config
// would break one of DeepSpeed's rules.
nlohmann::json deepspeed_config(const ModelSpec& model, const Plan& plan, const Workload& workload, const Cluster& cluster);

}  // namespace tessera
