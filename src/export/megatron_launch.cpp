#include "export/megatron_launch.h"

#include <algorithm>

#include <fmt/core.h>

#include "core/error.h"
#include "cost/offloaded_state.h"
#include "export/megatron_model_flags.h"
#include "export/megatron_rules.h"

namespace tessera {

namespace {

constexpr const char* kMegatronCommit = "d98e8a64";


// Megatron-Core names of the recompute modules (transformer_config.py recompute_modules), which
// are Tessera's names.
void add_recompute_modules(std::vector<std::string>& out, unsigned modules) {
  out.emplace_back("--recompute-modules");
  const std::string text = recompute_modules_text(modules);
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t plus = text.find('+', start);
    out.push_back(text.substr(start, plus == std::string::npos ? std::string::npos : plus - start));
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
}

bool uneven(const LayerSplit& s) { return !s.even(); }

// Pipeline layout. Megatron's --decoder-first/last-pipeline-num-layers count the layers of the
// whole first / last pipeline rank and split each rank's layers evenly over its virtual stages
// (transformer_block.py get_num_layers_to_build: "should be divisible by vp_size"); Tessera's
// split (plan.h LayerSplit) also gives a rank's chunks unequal counts where its layers do not
// divide by vpp, which only a layout can say. So: vpp = 1 and uneven: the two flags (each rank
// holds one stage); vpp > 1 and even: --num-layers-per-virtual-pipeline-stage; vpp > 1 and
// uneven: an explicit layout; the embedding and loss accounted as layers: Megatron's flags for it.
void add_pipeline(std::vector<std::string>& a, const ModelSpec& m, const Plan& p) {
  if (p.pp == 1) return;
  const LayerSplit split = split_layers(p, m.layers);
  if (p.account_embedding || p.account_loss) {
    // Megatron's own rule (plan.h LayerSplit), said with its flags.
    if (p.account_embedding) a.emplace_back("--account-for-embedding-in-pipeline-split");
    if (p.account_loss) a.emplace_back("--account-for-loss-in-pipeline-split");
    if (p.vpp > 1) add_flag(a, "--num-virtual-stages-per-pipeline-rank", p.vpp);
  } else if (p.vpp > 1 && !uneven(split)) {
    add_flag(a, "--num-layers-per-virtual-pipeline-stage", m.layers / (p.pp * p.vpp));
  } else if (p.vpp > 1) {
    a.emplace_back("--pipeline-model-parallel-layout");
    a.push_back(megatron_pipeline_layout(m, p));
  } else if (uneven(split)) {
    add_flag(a, "--decoder-first-pipeline-num-layers", split.first);
    add_flag(a, "--decoder-last-pipeline-num-layers", split.last);
  }
}

void add_recompute(std::vector<std::string>& a, const Plan& p) {
  switch (p.recompute) {
    case Recompute::none: break;
    case Recompute::selective:
      a.insert(a.end(), {"--recompute-granularity", "selective"});
      // Megatron's default list is core_attn; other sets are named.
      if (p.recompute_modules != 0) add_recompute_modules(a, p.recompute_modules);
      break;
    case Recompute::full:
      if (p.recompute_layers > 0) {
        a.insert(a.end(), {"--recompute-granularity", "full", "--recompute-method", "block"});
        add_flag(a, "--recompute-num-layers", p.recompute_layers);
      } else {
        a.insert(a.end(), {"--recompute-granularity", "full", "--recompute-method", "uniform"});
        add_flag(a, "--recompute-num-layers", std::int64_t{1});
      }
      break;
  }
}

// Sharding flavours (arguments.py validate_args):
//  - zero1: the distributed optimizer (optimizer state sharded over dp).
//  - zero2: Megatron-FSDP with --data-parallel-sharding-strategy optim_grads (optimizer state and
//    gradients sharded; the distributed optimizer keeps a full gradient buffer, so it is not ZeRO-2).
//  - zero3: Megatron-FSDP with optim_grads_params. Megatron-FSDP needs --ckpt-format fsdp_dtensor
//    and works with pp, ep and tied embeddings; torch FSDP2 (--use-torch-fsdp2) refuses pp > 1,
//    ep > 1, tied embeddings and gradient-accumulation fusion, so it is never emitted.
//  Megatron-FSDP version 1 (the default) turns the distributed optimizer on itself.
void add_sharding(std::vector<std::string>& a, const Plan& p) {
  switch (p.zero) {
    case OptimizerSharding::none: break;
    case OptimizerSharding::zero1: a.emplace_back("--use-distributed-optimizer"); break;
    case OptimizerSharding::zero2:
    case OptimizerSharding::zero3:
      a.insert(a.end(), {"--use-megatron-fsdp", "--data-parallel-sharding-strategy",
                         p.zero == OptimizerSharding::zero2 ? "optim_grads" : "optim_grads_params",
                         "--ckpt-format", "fsdp_dtensor"});
      break;
  }
  if (p.overlap_grad_reduce) a.emplace_back("--overlap-grad-reduce");
  // --overlap-param-gather needs a sharded optimizer and --overlap-grad-reduce; without sharding
  // there is no gather to overlap.
  if (p.overlap_param_gather && p.overlap_grad_reduce && p.zero != OptimizerSharding::none)
    a.emplace_back("--overlap-param-gather");
}

void add_precision(std::vector<std::string>& a, const Plan& p) {
  a.emplace_back("--bf16");
  if (p.precision != Precision::fp8) return;
  // E4M3 forward, E5M2 gradients; the recipe by name (Megatron's default is delayed).
  a.insert(a.end(), {"--fp8-format", "hybrid", "--fp8-recipe", to_string(p.fp8_recipe)});
  if (!p.fp8_param_gather) return;
  if (p.zero == OptimizerSharding::none)
    throw Error("fp8_param_gather", "Megatron supports it only with the distributed optimizer or FSDP",
                "zero=1, 2 or 3 with fp8_param_gather=1, or fp8_param_gather=0");
  a.emplace_back("--fp8-param-gather");
}

// pretrain_gpt.py trains every parameter of a model held on the GPUs: no adapters (LoRA / QLoRA go
// out as PEFT configs), no MegaTrain streaming.
void check_task(const Plan& p) {
  if (p.framework == TrainingFramework::megatrain)
    throw Error("framework", "MegaTrain streams layers from host memory, which Megatron-LM has no mode for",
                "a plan of framework megatron; a megatrain plan is launched with MegaTrain's own YAML config");
  if (p.tuning.adapters())
    throw Error("task", "Megatron-LM's pretrain_gpt.py trains every parameter (no LoRA adapters)",
                "pretrain or full_finetune; export lora / qlora as a PEFT config");
}

// Optimizer to the CPU (arguments.py validate_args at d98e8a64): --optimizer-cpu-offload builds
// the HybridDeviceOptimizer, which needs --use-precision-aware-optimizer (validate_args), which
// needs the distributed optimizer (megatron/core/optimizer/__init__.py get_megatron_optimizer;
// Megatron-FSDP version 1 turns it on); with --fp8-param-gather only the delayed recipe.
// --optimizer-offload-fraction 1.0 (argparse's default, written out) moves all of the state, as
// the cost model prices it (cost/offloaded_state.cpp). No parameter offload, no NVMe.
void add_optimizer_offload(std::vector<std::string>& a, const Plan& p) {
  if (p.offload.params != MemoryTier::gpu)
    throw Error("offload_params", "Megatron-LM keeps parameters in GPU memory", "gpu, or framework deepspeed");
  if (p.offload.optimizer == MemoryTier::gpu) return;
  if (p.offload.optimizer == MemoryTier::nvme)
    throw Error("offload_optimizer", "Megatron-LM offloads the optimizer to the CPU only", "gpu, cpu");
  if (p.zero == OptimizerSharding::none)
    throw Error("offload_optimizer", "Megatron's CPU optimizer offload runs on the distributed optimizer", "gpu, or zero >= 1");
  if (p.precision == Precision::fp8 && p.fp8_param_gather && p.fp8_recipe != Fp8Recipe::delayed)
    throw Error("fp8_param_gather", "Megatron's CPU optimizer offload with --fp8-param-gather needs the delayed recipe",
                "fp8_param_gather=0, fp8_recipe=delayed, or offload_optimizer=gpu");
  a.insert(a.end(), {"--optimizer-cpu-offload", "--optimizer-offload-fraction", "1.0", "--use-precision-aware-optimizer"});
}

// Activations to the CPU: Transformer Engine's layer-level offload, which validate_args switches on
// with --cpu-offloading-num-layers N > 0 (--cpu-offloading itself is not a command-line flag).
// TransformerConfig.__post_init__ (d98e8a64) allows 0 <= N < num_layers, no pipeline parallelism
// and no recomputation. N = layers - kActivationWindowLayers: the cost model keeps that many
// layers' activations on the GPU (cost/offloaded_state.h).
void add_activation_offload(std::vector<std::string>& a, const ModelSpec& m, const Plan& p) {
  if (p.offload.activations == MemoryTier::gpu) return;
  if (p.offload.activations == MemoryTier::nvme)
    throw Error("offload_activations", "Megatron-LM offloads activations to the CPU only", "gpu, cpu");
  if (p.pp > 1)
    throw Error("offload_activations", "Megatron's CPU activation offloading does not support pipeline parallelism",
                "gpu, or pp=1");
  if (p.recompute != Recompute::none)
    throw Error("offload_activations", "Megatron's CPU activation offloading does not work with recomputation",
                "gpu, or recompute=none");
  const auto layers = m.layers - static_cast<std::int64_t>(kActivationWindowLayers);
  if (layers < 1)
    throw Error("offload_activations", fmt::format("{} layers leave none to offload beside the GPU's window", m.layers),
                "gpu");
  add_flag(a, "--cpu-offloading-num-layers", layers);
}

void add_moe_plan(std::vector<std::string>& a, const ModelSpec& m, const Plan& p) {
  if (!m.is_moe()) return;
  // Megatron's default dispatcher is allgather: always named.
  a.insert(a.end(), {"--moe-token-dispatcher-type", to_string(p.dispatcher)});
  if (p.dispatcher == MoeDispatcher::flex) {
    // DeepEP cannot pad expert inputs to capacity; HybridEP can (transformer_config.py).
    a.insert(a.end(), {"--moe-flex-dispatcher-backend", p.capacity_factor > 0 ? "hybridep" : "deepep"});
  }
  if (p.capacity_factor > 0) {
    a.insert(a.end(), {"--moe-expert-capacity-factor", fmt::format("{}", p.capacity_factor),
                       "--moe-pad-expert-input-to-capacity"});
  }
  if (p.force_balance) a.emplace_back("--moe-router-force-load-balancing");
  if (p.overlap_ep) a.emplace_back("--overlap-moe-expert-parallel-comm");
  if (p.delay_wgrad) a.emplace_back("--delay-wgrad-compute");
}

std::vector<std::string> plan_args(const ModelSpec& m, const Plan& p, const Workload& w) {
  check_task(p);
  std::vector<std::string> a;
  add_flag(a, "--tensor-model-parallel-size", p.tp);
  add_flag(a, "--pipeline-model-parallel-size", p.pp);
  add_flag(a, "--context-parallel-size", p.cp);
  if (p.ep > 1) add_flag(a, "--expert-model-parallel-size", p.ep);
  // Megatron's default expert tensor parallelism is tp; stated for every MoE plan.
  if (m.is_moe()) add_flag(a, "--expert-tensor-parallel-size", p.expert_tp());
  add_pipeline(a, m, p);
  // validate_args switches sequence parallelism off at tp = 1; it is written only where it acts.
  if (p.sequence_parallel && p.tp > 1) a.emplace_back("--sequence-parallel");
  add_flag(a, "--micro-batch-size", p.micro_batch);
  add_flag(a, "--global-batch-size", w.global_batch);
  add_flag(a, "--seq-length", w.seq_len);
  add_recompute(a, p);
  add_sharding(a, p);
  if (p.overlap_tp_comm) {
    if (!(p.sequence_parallel && p.tp > 1))
      throw Error("overlap_tp", "Megatron's --tp-comm-overlap needs sequence parallelism with tp > 1",
                  "overlap_tp=0, or sp=1 with tp > 1");
    a.emplace_back("--tp-comm-overlap");
  }
  if (!p.overlap_p2p) a.emplace_back("--no-overlap-p2p-communication");
  add_precision(a, p);
  if (p.precision == Precision::fp8 && p.fp8_recipe == Fp8Recipe::delayed &&
      (p.selective_modules() & (kRecomputeMoeAct | kRecomputeLayernorm)))
    throw Error("fp8_recipe", "delayed scaling cannot recompute moe_act or layernorm (Megatron-Core)",
                "tensorwise, blockwise or mxfp8 with those modules, or other recompute_modules");
  if (!p.flash_attention) a.insert(a.end(), {"--attention-backend", "unfused"});
  add_moe_plan(a, m, p);
  add_optimizer_offload(a, p);
  add_activation_offload(a, m, p);
  return a;
}

// The checkpoint flags; the interval only when asked (the launch script passes it itself).
void add_checkpointing(std::vector<std::string>& a, const MegatronCheckpointing& c, bool with_interval) {
  if (c.save_interval < 0)
    throw Error("save_interval", "got " + std::to_string(c.save_interval), "0 (none) or a positive number of iterations");
  if (with_interval && c.save_interval > 0) add_flag(a, "--save-interval", c.save_interval);
  if (c.async_save) {
    a.insert(a.end(), {"--async-save", "--use-persistent-ckpt-worker"});
    if (std::find(a.begin(), a.end(), "--ckpt-format") == a.end()) a.insert(a.end(), {"--ckpt-format", "torch_dist"});
  }
  if (!c.fully_parallel_save) a.emplace_back("--no-ckpt-fully-parallel-save");
}

// Internal self-check: the table restates what Megatron refuses, so a violation here is a plan
// Megatron cannot run as written.
void require_megatron_accepts(const std::vector<std::string>& args, const Plan& p) {
  const auto violations = check_megatron_args(args, megatron_environment(p));
  if (violations.empty()) return;
  const RuleViolation& v = violations.front();
  throw Error("megatron", fmt::format("Megatron-LM would refuse this plan: rule {} ({}): {}", v.id, v.source, v.message),
              "a plan Megatron-LM accepts");
}

bool needs_shell_quotes(const std::string& arg) { return arg.find_first_of("()*+[], |") != std::string::npos; }

}  // namespace

std::string megatron_pipeline_layout(const ModelSpec& m, const Plan& p) {
  if (p.vpp <= 1 || !uneven(split_layers(p, m.layers))) return "";
  const std::vector<std::int64_t> layers = layers_per_virtual_stage(p, m.layers);
  std::string layout;
  for (std::size_t k = 0; k < layers.size(); ++k) {
    if (k > 0) layout += '|';
    if (k == 0) layout += 'E';
    if (layers[k] > 0) layout += fmt::format("t*{}", layers[k]);
    // MTP modules with the output layer on the last virtual stage (a rank's last chunk).
    if (k + 1 == layers.size()) layout += std::string(static_cast<std::size_t>(m.mtp_layers), 'm') + 'L';
  }
  return layout;
}

std::map<std::string, std::string> megatron_environment(const Plan& p) {
  // validate_args (before Blackwell): tp > 1 or cp > 1 needs CUDA_DEVICE_MAX_CONNECTIONS=1 so
  // that communication kernels are queued in issue order, except with FSDP (which needs it unset
  // or > 1) and with --overlap-moe-expert-parallel-comm (a warning there).
  const bool fsdp = p.zero == OptimizerSharding::zero2 || p.zero == OptimizerSharding::zero3;
  if ((p.tp > 1 || p.cp > 1) && !fsdp && !p.overlap_ep) return {{"CUDA_DEVICE_MAX_CONNECTIONS", "1"}};
  return {};
}

namespace {
std::vector<std::string> checked_args(const ModelSpec& m, const Plan& p, const Workload& w, const MegatronCheckpointing& c,
                                      bool with_interval) {
  std::vector<std::string> a = plan_args(m, p, w);
  add_checkpointing(a, c, with_interval);
  const std::vector<std::string> model = megatron_model_flags(m, p.tp, w.seq_len);
  a.insert(a.end(), model.begin(), model.end());
  require_megatron_accepts(a, p);
  return a;
}
}  // namespace

std::vector<std::string> megatron_args(const ModelSpec& m, const Plan& p, const Workload& w, const MegatronCheckpointing& c) {
  return checked_args(m, p, w, c, true);
}

std::string megatron_command_line(const ModelSpec& model, const Plan& plan, const Workload& workload,
                                  const MegatronCheckpointing& checkpointing) {
  std::string line;
  for (const auto& arg : megatron_args(model, plan, workload, checkpointing)) {
    if (!line.empty()) line += ' ';
    line += needs_shell_quotes(arg) ? "'" + arg + "'" : arg;
  }
  return line;
}

std::string megatron_launch_script(const ModelSpec& m, const Cluster& c, const Plan& p, const Workload& w,
                                   const MegatronCheckpointing& checkpointing) {
  // The interval goes to SAVE_INTERVAL below, next to --save in CHECKPOINT_ARGS.
  const std::vector<std::string> args = checked_args(m, p, w, checkpointing, false);
  const std::int64_t gpus = p.gpus();
  const std::int64_t per_node = std::min(gpus, c.gpus_per_node);
  if (gpus % per_node != 0)
    throw Error("plan", fmt::format("{} GPUs do not fill whole nodes of {}", gpus, c.gpus_per_node),
                "a plan over whole nodes, or fewer GPUs than one node");
  const std::int64_t nodes = gpus / per_node;
  std::string s;
  s += "#!/bin/bash\n";
  s += fmt::format("# Megatron-LM (commit {}) pretrain_gpt.py for {} on {} x {} ({} nodes x {} GPUs).\n",
                   kMegatronCommit, m.name, gpus, c.gpu.name, nodes, per_node);
  s += fmt::format("# Plan: tp={} pp={} vpp={} cp={} dp={} ep={}, micro-batch {}, global batch {}, sequence {}.\n",
                   p.tp, p.pp, p.vpp, p.cp, p.dp, p.ep, p.micro_batch, w.global_batch, w.seq_len);
  s += "# Generated by Tessera; run the same script on every node.\n";
  s += "set -euo pipefail\n\n";
  s += "# ---- Cluster (defaults from the plan; override per node) ----\n";
  s += fmt::format("NNODES=${{NNODES:-{}}}\n", nodes);
  s += fmt::format("GPUS_PER_NODE=${{GPUS_PER_NODE:-{}}}\n", per_node);
  s += "NODE_RANK=${NODE_RANK:-0}\n";
  s += "MASTER_ADDR=${MASTER_ADDR:-localhost}\n";
  s += "MASTER_PORT=${MASTER_PORT:-6000}\n";
  s += "# Under Slurm, one task per node:\n";
  s += fmt::format("#   srun --nodes {} --ntasks-per-node 1 env NODE_RANK=\\$SLURM_NODEID \\\n", nodes);
  s += "#     MASTER_ADDR=$(scontrol show hostnames \"$SLURM_JOB_NODELIST\" | head -n 1) bash this_script.sh\n\n";
  s += "# ---- Placeholders: set these before running ----\n";
  s += "MEGATRON_LM=${MEGATRON_LM:?set the path of your Megatron-LM checkout}\n";
  s += "DATA_PATH=${DATA_PATH:?set the path of your dataset prefix (preprocess_data.py output, without .bin/.idx)}\n";
  s += "TOKENIZER_MODEL=${TOKENIZER_MODEL:?set your Hugging Face tokenizer name or path}\n";
  s += "CHECKPOINT_DIR=${CHECKPOINT_DIR:?set the directory checkpoints are saved to and loaded from}\n\n";
  s += "# ---- Schedule: your choices (not part of the plan) ----\n";
  s += "TRAIN_ITERS=${TRAIN_ITERS:-100000}\n";
  s += "LR=${LR:-3.0e-4}\n";
  s += "MIN_LR=${MIN_LR:-3.0e-5}\n";
  s += "WARMUP_ITERS=${WARMUP_ITERS:-2000}\n";
  if (checkpointing.save_interval > 0)
    s += fmt::format("# Recommended by tessera plan --failures (the optimal checkpoint interval in steps).\n"
                     "SAVE_INTERVAL=${{SAVE_INTERVAL:-{}}}\n\n",
                     checkpointing.save_interval);
  else
    s += "SAVE_INTERVAL=${SAVE_INTERVAL:-1000}\n\n";
  for (const auto& [name, value] : megatron_environment(p))
    s += fmt::format("# Required by Megatron's validate_args for this plan.\nexport {}={}\n\n", name, value);
  s += "# ---- The plan and the model (Tessera) ----\nPLAN_ARGS=(\n";
  for (std::size_t i = 0; i < args.size(); ++i) {
    const bool flag = args[i].rfind("--", 0) == 0;
    if (flag) s += i == 0 ? "  " : "\n  ";
    else s += ' ';
    s += needs_shell_quotes(args[i]) ? "'" + args[i] + "'" : args[i];
  }
  s += "\n)\n";
  s += "DATA_ARGS=(\n  --data-path \"$DATA_PATH\" --split 99,1,0\n"
       "  --tokenizer-type HuggingFaceTokenizer --tokenizer-model \"$TOKENIZER_MODEL\"\n)\n";
  s += "SCHEDULE_ARGS=(\n  --train-iters \"$TRAIN_ITERS\" --lr \"$LR\" --min-lr \"$MIN_LR\" --lr-decay-style cosine\n"
       "  --lr-warmup-iters \"$WARMUP_ITERS\" --weight-decay 0.1 --clip-grad 1.0 --adam-beta1 0.9 --adam-beta2 0.95\n)\n";
  s += "CHECKPOINT_ARGS=(\n  --save \"$CHECKPOINT_DIR\" --load \"$CHECKPOINT_DIR\" --save-interval \"$SAVE_INTERVAL\"\n)\n";
  s += "LOGGING_ARGS=(\n  --log-interval 1 --eval-interval 1000 --eval-iters 10\n)\n\n";
  s += "torchrun --nnodes \"$NNODES\" --nproc-per-node \"$GPUS_PER_NODE\" --node-rank \"$NODE_RANK\" \\\n"
       "  --master-addr \"$MASTER_ADDR\" --master-port \"$MASTER_PORT\" \\\n"
       "  \"$MEGATRON_LM/pretrain_gpt.py\" \\\n"
       "  \"${PLAN_ARGS[@]}\" \"${DATA_ARGS[@]}\" \"${SCHEDULE_ARGS[@]}\" \"${CHECKPOINT_ARGS[@]}\" \"${LOGGING_ARGS[@]}\"\n";
  return s;
}

}  // namespace tessera
