// A plan as a Megatron-LM launch (pretrain_gpt.py, Megatron-LM d98e8a64): the argument list (the
// plan's parallel, batch, recompute, sharding, overlap and precision flags and the model
// definition of export/megatron_model_flags.h), the environment it needs, and a bash script that
// runs it with torchrun on the cluster's nodes. Every argument list passes Megatron's rule table
// (export/megatron_rules.h) or is not returned: a plan Megatron cannot express throws Error saying
// why. The reverse direction (arguments read back into a plan) is formats/megatron_args.h.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

// Checkpoint flags (tessera plan --failures, reliability/job_goodput.h), checked by the rule table
// like every other argument (megatron_rules.cpp: save-needs-positive-interval,
// async-save-ckpt-format, async-save-needs-persistent-worker):
//   save_interval > 0: --save-interval N (iterations; in the launch script it is SAVE_INTERVAL's
//     default, since the script's CHECKPOINT_ARGS passes --save with it);
//   async_save: --async-save --use-persistent-ckpt-worker (validate_args switches async saving
//     off without the worker) and --ckpt-format torch_dist unless the plan names a format;
//   fully_parallel_save = false: --no-ckpt-fully-parallel-save.
struct MegatronCheckpointing {
  std::int64_t save_interval = 0;  // 0: no --save-interval
  bool async_save = false;
  bool fully_parallel_save = true;
};

std::vector<std::string> megatron_args(const ModelSpec& model, const Plan& plan, const Workload& workload,
                                       const MegatronCheckpointing& checkpointing = {});

// Environment variables the launch exports (CUDA_DEVICE_MAX_CONNECTIONS, which validate_args
// requires to be 1 with tensor or context parallelism and not 1 with FSDP).
std::map<std::string, std::string> megatron_environment(const Plan& plan);

// The --pipeline-model-parallel-layout of an interleaved plan whose virtual stages are uneven
// (embedding on the first, MTP layers and the loss on the last); "" when the plan does not need one.
std::string megatron_pipeline_layout(const ModelSpec& model, const Plan& plan);

// One line: the arguments joined with spaces, quoted where the shell needs it.
std::string megatron_command_line(const ModelSpec& model, const Plan& plan, const Workload& workload,
                                  const MegatronCheckpointing& checkpointing = {});

// A bash script (set -euo pipefail) that launches the plan: torchrun over the plan's nodes (with
// the srun equivalent in a comment), pretrain_gpt.py with megatron_args(), and marked placeholders
// for the Megatron-LM checkout, data, tokenizer, checkpoints and the schedule (iterations, lr).
std::string megatron_launch_script(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                                   const Workload& workload, const MegatronCheckpointing& checkpointing = {});

}  // namespace tessera
