#include "export/torchtitan_config.h"

#include <algorithm>
#include <vector>

#include <fmt/core.h>
#include <fmt/format.h>

#include "core/error.h"
#include "search/framework_support.h"

namespace tessera {
namespace {

// Every fact below is pytorch/torchtitan main @ b5bcd76c66d0acb1a08b176d9639425bc55e0b2a.
constexpr const char* kModuleName = "tessera_recipe";
constexpr const char* kFunctionName = "tessera_plan";
constexpr int kRendezvousPort = 29500;

const char* py_bool(bool b) { return b ? "True" : "False"; }

// torchtitan's trainer needs no CUDA graphs under pp > 1 or with EP's host-synchronising
// dispatchers (trainer.py Trainer.Config._validate_cuda_graphs); varlen attention recipes turn
// them off too (models/llama3/config_registry.py llama3_debugmodel_varlen_attn).
bool cuda_graphs_disabled(const Plan& p, const std::string& attn_backend) {
  return p.pp > 1 || p.ep > 1 || attn_backend == "varlen";
}

// CP runs only with FlexAttention (models/common/decoder.py update_from_config).
std::string attn_backend(const TorchtitanFlavor& f, const Plan& p) {
  return p.cp > 1 ? "flex" : f.default_attn_backend;
}

// Async TP needs compile of the model (config/configs.py CompileConfig.__post_init__); the FP8
// converters warn that they need compile for speed (components/quantization/float8.py, mx.py).
bool compiled(const Plan& p) { return (p.overlap_tp_comm && p.tp > 1) || p.precision == Precision::fp8; }

std::string converters(const ModelSpec& m, const Plan& p) {
  if (p.precision != Precision::fp8) return "";
  const char* comp = py_bool(compiled(p));
  std::string c;
  if (p.fp8_recipe == Fp8Recipe::mxfp8) {
    // mx.py: fqns is an include list; "layers." keeps lm_head in bf16.
    c += fmt::format("            MXFP8LinearConverter.Config(fqns=[\"layers.\"], model_compile_enabled={}),\n", comp);
    if (m.is_moe()) c += fmt::format("            MXFP8GroupedExpertsConverter.Config(model_compile_enabled={}),\n", comp);
  } else {
    // float8.py: rowwise is torchtitan's dynamic (current) scaling; lm_head stays bf16 as in
    // models/llama3/config_registry.py llama3_405b.
    c += fmt::format("            Float8LinearConverter.Config(recipe_name=\"rowwise\", filter_fqns=[\"lm_head\"], "
                     "model_compile_enabled={}),\n", comp);
    if (m.is_moe()) c += fmt::format("            Float8GroupedExpertsConverter.Config(model_compile_enabled={}),\n", comp);
  }
  return c;
}

std::string model_spec_lines(const ModelSpec& m, const Plan& p, const TorchtitanFlavor& f) {
  std::string t = fmt::format("    model_spec = model_registry(\n        \"{}\",\n        attn_backend=\"{}\",\n",
                              f.flavor, attn_backend(f, p));
  if (m.mtp_layers > 0) t += fmt::format("        num_mtp_layers={},\n", m.mtp_layers);
  if (const std::string c = converters(m, p); !c.empty()) t += "        converters=[\n" + c + "        ],\n";
  return t + "    )\n";
}

// Model parts in pipeline order (virtual stage k runs on rank k % pp: the "loop" placement of
// distributed/pipeline_parallel.py _get_pp_rank_to_stage_indices_mapping), layers from the
// plan's split.
std::string layers_per_part(const ModelSpec& m, const Plan& p) {
  const std::vector<std::int64_t> parts = layers_per_virtual_stage(p, m.layers);
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

// Schedules of torch.distributed.pipelining (get_schedule_class): one stage per rank -> 1F1B,
// looped -> Interleaved1F1B, as Tessera's simulator schedules them.
const char* schedule(const Plan& p) { return p.vpp > 1 ? "Interleaved1F1B" : "1F1B"; }

// FSDP2's CPU offload (config/configs.py TrainingConfig.enable_cpu_offload -> distributed/fsdp.py
// apply_fsdp_to_decoder: CPUOffloadPolicy()) moves the sharded parameters, their gradients and the
// optimizer step to the CPU together: optimizer and params both cpu, nothing else.
bool cpu_offload(const Plan& p) { return p.offload.optimizer == MemoryTier::cpu && p.offload.params == MemoryTier::cpu; }

void check_torchtitan_offload(const Plan& p) {
  const StatePlacement& o = p.offload;
  if (o.activations != MemoryTier::gpu)
    throw Error("offload_activations", "torchtitan has no activation offload", "gpu");
  if (o.optimizer == MemoryTier::nvme || o.params == MemoryTier::nvme)
    throw Error(o.optimizer == MemoryTier::nvme ? "offload_optimizer" : "offload_params",
                "torchtitan's FSDP2 offloads to CPU memory only", "gpu, cpu");
  if (o.optimizer != o.params)
    throw Error(o.optimizer == MemoryTier::cpu ? "offload_params" : "offload_optimizer",
                "torchtitan's training.enable_cpu_offload moves parameters, gradients and optimizer state together",
                "offload_optimizer=cpu with offload_params=cpu, or both gpu");
}

// torchtitan trains every parameter (no LoRA adapters in its trainer).
void check_torchtitan_task(const Plan& p) {
  if (p.tuning.adapters())
    throw Error("task", "torchtitan trains every parameter (no LoRA adapters)",
                "pretrain or full_finetune; export lora / qlora as a PEFT config");
}

std::string training_lines(const Plan& p, const Workload& w, const std::string& backend) {
  std::string t = "    training=TrainingConfig(\n";
  // trainer.py Trainer.__init__: tokens per forward per DP rank; accumulation =
  // tokens_per_step / (tokens_per_microbatch x num_pp_microbatches x dp).
  t += fmt::format("        num_tokens_per_microbatch_per_dp_rank={} * {},  # micro-batch x seq\n", p.micro_batch, w.seq_len);
  t += fmt::format("        num_tokens_per_train_step={} * {},  # global batch x seq\n", w.global_batch, w.seq_len);
  t += fmt::format("        max_context_length={},\n", w.seq_len);
  t += "        mixed_precision_param=\"bfloat16\",\n";
  t += fmt::format("        disable_cuda_graphs={},\n", py_bool(cuda_graphs_disabled(p, backend)));
  if (cpu_offload(p)) t += "        enable_cpu_offload=True,  # FSDP2 CPUOffloadPolicy: params, grads, optimizer\n";
  return t + "    ),\n";
}

// distributed/parallel_dims.py: world = dp_replicate x dp_shard x cp x tp x pp; FSDP2 shards over
// dp_shard (and cp); DDP is dp_replicate alone.
std::string parallelism_lines(const ModelSpec& m, const Plan& p, const Workload& w) {
  const bool fsdp = p.zero == OptimizerSharding::zero3;
  std::string t = "    parallelism=ParallelismConfig(\n";
  t += fmt::format("        data_parallel_replicate_degree={},\n", fsdp ? 1 : p.dp);
  t += fmt::format("        data_parallel_shard_degree={},\n", fsdp ? p.dp : 1);
  t += fmt::format("        fsdp_reshard_after_forward=\"{}\",\n", fsdp && !p.reshard_after_forward ? "never" : "always");
  t += fmt::format("        tensor_parallel_degree={},\n", p.tp);
  t += fmt::format("        enable_sequence_parallel={},\n", py_bool(p.tp > 1 && p.sequence_parallel));
  t += fmt::format("        pipeline_parallel_degree={},\n", p.pp);
  if (p.pp > 1) {
    t += fmt::format("        pipeline_parallel_schedule=\"{}\",\n", schedule(p));
    t += fmt::format("        num_pp_microbatches={},  # all of a step's micro-batches per DP rank\n", p.microbatches(w));
    t += fmt::format("        module_fqns_per_model_part=_model_parts({}, {}),\n", m.layers, layers_per_part(m, p));
  }
  t += fmt::format("        context_parallel_degree={},\n", p.cp);
  if (p.cp > 1) t += "        context_parallel_load_balancer=\"ptrr\",  # FlexAttention's balancer\n";
  t += fmt::format("        expert_parallel_degree={},\n", p.ep);
  return t + "    ),\n";
}

std::string activation_checkpoint(const Plan& p) {
  switch (p.recompute) {
    case Recompute::none: return "None";
    case Recompute::selective: return "SelectiveAC.Config()";
    case Recompute::full: return "FullAC.Config()";
  }
  return "None";
}

std::string imports(const ModelSpec& m, const Plan& p, const TorchtitanFlavor& f) {
  std::string t;
  t += "from torchtitan.components.data import ConcatThenSplitPackingConfig, GrainDataLoader\n";
  t += m.mtp_layers > 0 ? "from torchtitan.models.deepseek_v3.mtp import MTPLoss\n"
                        : "from torchtitan.components.loss import ChunkedLossWrapper, CrossEntropyLoss\n";
  if (p.precision == Precision::fp8) {
    const char* kind = p.fp8_recipe == Fp8Recipe::mxfp8 ? "MXFP8" : "Float8";
    t += m.is_moe() ? fmt::format("from torchtitan.components.quantization import {0}GroupedExpertsConverter, "
                                  "{0}LinearConverter\n", kind)
                    : fmt::format("from torchtitan.components.quantization import {}LinearConverter\n", kind);
  }
  t += "from torchtitan.config import CompileConfig, DebugConfig, ParallelismConfig, TrainingConfig\n";
  t += "from torchtitan.distributed.activation_checkpoint import FullAC, SelectiveAC\n";
  t += "from torchtitan.hf_datasets.text_datasets import DATASETS\n";
  t += "from torchtitan.models.common.config_utils import decoder_vocab_size\n";
  t += fmt::format("from torchtitan.models.{} import model_registry\n", f.module);
  return t + "from torchtitan.trainer import Trainer\n";
}

// Module FQNs of one model part per entry of `layers`, as distributed/pipeline_parallel.py
// _generate_llm_fqn_per_model_part names them.
constexpr const char* kModelPartsHelper =
    "def _model_parts(n_layers: int, layers_per_part: list[int]) -> list[list[str]]:\n"
    "    \"\"\"FQNs per model part: tok_embeddings first, norm and lm_head last.\"\"\"\n"
    "    assert sum(layers_per_part) == n_layers\n"
    "    parts, first = [], 0\n"
    "    for count in layers_per_part:\n"
    "        parts.append([f\"layers.{i}\" for i in range(first, first + count)])\n"
    "        first += count\n"
    "    parts[0].insert(0, \"tok_embeddings\")\n"
    "    parts[-1].extend([\"norm\", \"lm_head\"])\n"
    "    return parts\n\n\n";

std::string loss_line(const ModelSpec& m) {
  if (m.mtp_layers > 0) return "    loss=MTPLoss.Config(global_vocab_size=decoder_vocab_size(model_spec)),\n";
  return "    loss=ChunkedLossWrapper.Config(\n"
         "        loss_fn=CrossEntropyLoss.Config(global_vocab_size=decoder_vocab_size(model_spec)),\n    ),\n";
}

// The Trainer.Config arguments one level deeper (every line gets 4 more spaces).
std::string indented(const std::string& block) {
  std::string out;
  std::size_t begin = 0;
  while (begin < block.size()) {
    const std::size_t end = std::min(block.find('\n', begin), block.size());
    out += "    " + block.substr(begin, end - begin) + "\n";
    begin = end + 1;
  }
  return out;
}

std::string recipe(const ModelSpec& m, const Plan& p, const Workload& w, const TorchtitanFlavor& f) {
  std::string t = fmt::format("# torchtitan recipe written by Tessera for {} (torchtitan main @ b5bcd76, config\n"
                              "# system of torchtitan/config/README.md). Placeholders: hf_assets_path, dataset.\n",
                              m.name);
  t += imports(m, p, f) + "\n\n";
  if (p.pp > 1) t += kModelPartsHelper;
  t += fmt::format("def {}() -> Trainer.Config:\n", kFunctionName);
  t += model_spec_lines(m, p, f);
  std::string args = "    model_spec=model_spec,\n";
  args += "    hf_assets_path=\"./assets/hf/PLACEHOLDER\",  # tokenizer (and weights to load)\n";
  args += loss_line(m);
  args += "    dataloader=GrainDataLoader.Config(\n"
          "        dataset=ConcatThenSplitPackingConfig(dataset=DATASETS[\"c4\"]),  # placeholder dataset\n    ),\n";
  args += training_lines(p, w, attn_backend(f, p));
  args += parallelism_lines(m, p, w);
  args += fmt::format("    activation_checkpoint={},\n", activation_checkpoint(p));
  args += fmt::format("    compile=CompileConfig(enable={}, enable_async_tensor_parallel={}),\n", py_bool(compiled(p)),
                      py_bool(p.overlap_tp_comm && p.tp > 1));
  if (p.force_balance) args += "    debug=DebugConfig(moe_force_load_balance=True),\n";
  return t + "    return Trainer.Config(\n" + indented(args) + "    )\n";
}

// run_train.sh: torchrun with the c10d rendezvous, expandable segments, -m torchtitan.train.
std::string launch(const Cluster& c) {
  return fmt::format("PYTORCH_ALLOC_CONF=\"expandable_segments:True\" PYTHONPATH=.:$PYTHONPATH \\\n"
                     "torchrun --nnodes={} --nproc_per_node={} --rdzv_backend=c10d "
                     "--rdzv_endpoint=\"$MASTER_ADDR:{}\" \\\n"
                     "  -m torchtitan.train --module {} --config {}\n",
                     c.nodes, c.gpus_per_node, kRendezvousPort, kModuleName, kFunctionName);
}

}  // namespace

TorchtitanJobFiles torchtitan_job(const ModelSpec& model, const Plan& plan, const Workload& workload,
                                  const Cluster& cluster) {
  check_torchtitan_task(plan);
  check_torchtitan_offload(plan);
  if (const char* reason = torchtitan_unsupported_reason(model, plan))
    throw Error("framework", fmt::format("torchtitan cannot run this plan: {}", reason), "a plan torchtitan can run");
  // torch's ScheduleInterleaved1F1B (torch/distributed/pipelining/schedules.py, v2.10): rounds =
  // max(1, micro-batches / pp) must divide the micro-batches. Needs the workload, so it is checked
  // here rather than in torchtitan_can_run.
  const std::int64_t microbatches = plan.microbatches(workload);
  if (plan.pp > 1 && plan.vpp > 1 && microbatches % std::max<std::int64_t>(1, microbatches / plan.pp) != 0)
    throw Error("framework", "torchtitan cannot run this plan: Interleaved1F1B needs the micro-batches to be a multiple of max(1, micro-batches / pp)",
                "a plan torchtitan can run");
  const TorchtitanFlavor& flavor = *torchtitan_flavor(model);
  return {kModuleName, kFunctionName, recipe(model, plan, workload, flavor), launch(cluster)};
}

std::string torchtitan_job_text(const TorchtitanJobFiles& job) {
  std::string t = fmt::format("# ---- {}.py ----\n{}\n# ---- launch, on each node ----\n", job.module_name, job.recipe_py);
  std::size_t begin = 0;
  while (begin < job.launch_command.size()) {
    const std::size_t end = std::min(job.launch_command.find('\n', begin), job.launch_command.size());
    t += "# " + job.launch_command.substr(begin, end - begin) + "\n";
    begin = end + 1;
  }
  return t;
}

}  // namespace tessera
