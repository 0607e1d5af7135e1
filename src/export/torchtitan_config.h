// A plan as a torchtitan job: a Python recipe module (a function returning Trainer.Config) and the
// torchrun command that runs it.
//
// torchtitan replaced its TOML job files with Python configurations in 2026 ("[BC Breaking] Config
// System Refactor: TOML to Python Dataclass Registry", pytorch/torchtitan#2386, commit 9810191;
// the last TOML release is v0.2.2, 73a0e69). A run is now selected with `--module <python module>
// --config <function>` (torchtitan/config/README.md, run_train.sh @ b5bcd76); the `--section.key`
// flags are frozen and slated for removal, so everything goes into the recipe.
#pragma once

#include <string>

#include "hardware/cluster.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

struct TorchtitanJobFiles {
  std::string module_name;    // the recipe's Python module ("tessera_recipe")
  std::string function_name;  // the function returning Trainer.Config ("tessera_plan")
  std::string recipe_py;      // contents of <module_name>.py
  std::string launch_command; // torchrun ... -m torchtitan.train --module ... --config ...
};

// Throws Error("framework", reason) when torchtitan cannot run the plan
// (search/framework_support.h). Exact semantics:
//   - per-rank tokens of one forward = micro_batch x seq (training.num_tokens_per_microbatch_per_dp_rank);
//   - pp > 1: all gbs / (dp x micro_batch) micro-batches go through one pipeline schedule
//     (parallelism.num_pp_microbatches), no gradient accumulation; pp = 1: that many accumulation
//     steps; training.num_tokens_per_train_step = gbs x seq either way;
//   - pipeline stages: parallelism.module_fqns_per_model_part from the plan's layer split, with
//     tok_embeddings on the first and norm + lm_head on the last model part;
//   - FP8: a Float8LinearConverter (or MXFP8LinearConverter) in model_registry(converters=...),
//     the only thing that enables it.
TorchtitanJobFiles torchtitan_job(const ModelSpec& model, const Plan& plan, const Workload& workload,
                                  const Cluster& cluster);

// The recipe and the launch command as one text (what `tessera plan --emit torchtitan` prints).
std::string torchtitan_job_text(const TorchtitanJobFiles& job);

}  // namespace tessera
