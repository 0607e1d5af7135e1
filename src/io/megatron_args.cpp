#include "io/megatron_args.h"

#include <algorithm>
#include <map>
#include <set>

#include <fmt/core.h>

#include "core/error.h"
#include "io/integer_text.h"

namespace tessera {

namespace {

void add(std::vector<std::string>& out, const char* flag, std::int64_t value) {
  out.emplace_back(flag);
  out.push_back(std::to_string(value));
}

// Flags that take a value, and switches; the parser accepts exactly these.
const std::set<std::string>& value_flags() {
  static const std::set<std::string> flags = {
      "--tensor-model-parallel-size", "--pipeline-model-parallel-size", "--context-parallel-size",
      "--expert-model-parallel-size", "--num-layers-per-virtual-pipeline-stage",
      "--num-virtual-stages-per-pipeline-rank", "--micro-batch-size", "--global-batch-size",
      "--seq-length", "--recompute-granularity", "--recompute-method", "--recompute-num-layers",
      "--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers", "--fp8-format",
      "--num-layers", "--hidden-size", "--ffn-hidden-size", "--num-attention-heads",
      "--num-query-groups", "--kv-channels", "--max-position-embeddings", "--vocab-size",
      "--normalization", "--position-embedding-type", "--num-experts", "--moe-router-topk",
      "--moe-ffn-hidden-size", "--moe-shared-expert-intermediate-size", "--moe-layer-freq",
      "--q-lora-rank", "--kv-lora-rank", "--qk-head-dim", "--qk-pos-emb-head-dim", "--v-head-dim",
      "--attention-dropout", "--hidden-dropout", "--attention-backend", "--window-size",
      "--data-parallel-size", "--expert-tensor-parallel-size", "--moe-token-dispatcher-type",
      "--moe-flex-dispatcher-backend", "--moe-expert-capacity-factor", "--fp8-recipe", "--mtp-num-layers",
      "--moe-router-score-function", "--moe-router-num-groups", "--moe-router-group-topk",
      "--data-parallel-sharding-strategy", "--ckpt-format"};
  return flags;
}
const std::set<std::string>& switch_flags() {
  static const std::set<std::string> flags = {
      "--sequence-parallel", "--use-distributed-optimizer", "--use-torch-fsdp2",
      "--overlap-grad-reduce", "--overlap-param-gather", "--tp-comm-overlap",
      "--overlap-p2p-communication", "--bf16", "--fp16", "--swiglu", "--squared-relu",
      "--group-query-attention", "--untie-embeddings-and-output-weights", "--disable-bias-linear",
      "--add-qkv-bias", "--multi-latent-attention", "--no-overlap-p2p-communication", "--moe-grouped-gemm",
      "--moe-pad-expert-input-to-capacity", "--moe-router-force-load-balancing",
      "--overlap-moe-expert-parallel-comm", "--delay-wgrad-compute", "--fp8-param-gather", "--use-megatron-fsdp",
      "--moe-router-enable-expert-bias", "--moe-router-pre-softmax", "--qk-layernorm"};
  return flags;
}

// --recompute-modules takes a list (nargs): the tokens up to the next flag.
constexpr const char* kRecomputeModulesFlag = "--recompute-modules";

// Megatron-Core names of the recompute modules (transformer_config.py recompute_modules, d98e8a64),
// which are Tessera's names.
void add_recompute_modules(std::vector<std::string>& out, unsigned modules) {
  out.emplace_back(kRecomputeModulesFlag);
  const std::string text = recompute_modules_text(modules);
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t plus = text.find('+', start);
    out.push_back(text.substr(start, plus == std::string::npos ? std::string::npos : plus - start));
    if (plus == std::string::npos) break;
    start = plus + 1;
  }
}

// Megatron's --moe-layer-freq as an explicit per-layer list (1 = MoE). Megatron's integer form N
// puts the MoE layer first in each group of N (layer i is MoE when i % N == 0,
// transformer_config.py moe_layer_freq), Tessera's layer_freq the last (Llama 4's
// interleave_moe_layer_step), and leading dense layers have no integer form at all.
std::string moe_layer_pattern(const ModelSpec& m) {
  std::string list = "[";
  for (std::int64_t i = 0; i < m.layers; ++i) {
    if (i > 0) list += ',';
    list += m.is_moe_layer(i) ? '1' : '0';
  }
  return list + "]";
}

}  // namespace

std::vector<std::string> megatron_args(const ModelSpec& m, const Plan& p, const Workload& w) {
  std::vector<std::string> a;
  add(a, "--tensor-model-parallel-size", p.tp);
  add(a, "--pipeline-model-parallel-size", p.pp);
  add(a, "--context-parallel-size", p.cp);
  if (p.ep > 1) add(a, "--expert-model-parallel-size", p.ep);
  // Megatron's default expert tensor parallelism is tp; stated for every MoE plan (MoE parallel
  // folding: etp x ep must divide tp x cp x dp, which validate_plan checks).
  if (m.is_moe()) add(a, "--expert-tensor-parallel-size", p.expert_tp());
  const LayerSplit split = split_layers(p, m.layers);
  const bool uneven = split.virtual_stages > 1 && (split.first != split.middle || split.last != split.middle);
  if (p.vpp > 1) {
    if (!uneven) add(a, "--num-layers-per-virtual-pipeline-stage", m.layers / (p.pp * p.vpp));
    else add(a, "--num-virtual-stages-per-pipeline-rank", p.vpp);
  }
  if (uneven) {
    add(a, "--decoder-first-pipeline-num-layers", split.first);
    add(a, "--decoder-last-pipeline-num-layers", split.last);
  }
  if (p.sequence_parallel) a.emplace_back("--sequence-parallel");
  add(a, "--micro-batch-size", p.micro_batch);
  add(a, "--global-batch-size", w.global_batch);
  add(a, "--seq-length", w.seq_len);
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
        add(a, "--recompute-num-layers", p.recompute_layers);
      } else {
        a.insert(a.end(), {"--recompute-granularity", "full", "--recompute-method", "uniform"});
        add(a, "--recompute-num-layers", 1);
      }
      break;
  }
  if (p.zero == OptimizerSharding::zero1 || p.zero == OptimizerSharding::zero2)
    a.emplace_back("--use-distributed-optimizer");
  if (p.zero == OptimizerSharding::zero3) {
    // ZeRO-3 is Megatron-FSDP sharding optimizer state, gradients and parameters. Not
    // --use-torch-fsdp2, which Megatron rejects with pipeline or expert parallelism, and it
    // needs the fsdp_dtensor checkpoint format (arguments.py validate_args, d98e8a64).
    a.insert(a.end(), {"--use-megatron-fsdp", "--data-parallel-sharding-strategy", "optim_grads_params",
                       "--ckpt-format", "fsdp_dtensor"});
  }
  if (p.overlap_grad_reduce) a.emplace_back("--overlap-grad-reduce");
  // Megatron: --overlap-param-gather needs the distributed optimizer or Megatron-FSDP, and
  // --overlap-grad-reduce with it.
  if (p.overlap_param_gather && p.overlap_grad_reduce && p.zero != OptimizerSharding::none)
    a.emplace_back("--overlap-param-gather");
  if (p.overlap_tp_comm) a.emplace_back("--tp-comm-overlap");
  if (!p.overlap_p2p) a.emplace_back("--no-overlap-p2p-communication");
  a.emplace_back("--bf16");
  if (p.precision == Precision::fp8) {
    // E4M3 forward, E5M2 gradients; the recipe by name (Megatron's default is delayed).
    a.insert(a.end(), {"--fp8-format", "hybrid", "--fp8-recipe", to_string(p.fp8_recipe)});
    if (p.fp8_param_gather) {
      if (p.zero == OptimizerSharding::none)
        throw Error("fp8_param_gather", "Megatron supports it only with the distributed optimizer or FSDP",
                    "zero=1 or zero=3 with fp8_param_gather=1, or fp8_param_gather=0");
      a.emplace_back("--fp8-param-gather");
    }
  }
  if (p.precision == Precision::fp8 && p.fp8_recipe == Fp8Recipe::delayed &&
      (p.selective_modules() & (kRecomputeMoeAct | kRecomputeLayernorm)))
    throw Error("fp8_recipe", "delayed scaling cannot recompute moe_act or layernorm (Megatron-Core)",
                "tensorwise, blockwise or mxfp8 with those modules, or other recompute_modules");
  if (!p.flash_attention) a.insert(a.end(), {"--attention-backend", "unfused"});
  // Model shape.
  add(a, "--num-layers", m.layers);
  add(a, "--hidden-size", m.hidden);
  if (m.ffn_hidden > 0) add(a, "--ffn-hidden-size", m.ffn_hidden);
  add(a, "--num-attention-heads", m.heads);
  if (m.kv_heads != m.heads && m.attention != AttentionKind::mla) {
    a.emplace_back("--group-query-attention");
    add(a, "--num-query-groups", m.kv_heads);
  }
  if (m.head_dim * m.heads != m.hidden) add(a, "--kv-channels", m.head_dim);
  add(a, "--max-position-embeddings", m.max_context);
  add(a, "--vocab-size", m.vocab);
  if (m.mlp == MlpType::swiglu) a.emplace_back("--swiglu");
  if (m.mlp == MlpType::relu2) a.emplace_back("--squared-relu");
  a.insert(a.end(), {"--normalization", m.norm == NormType::rmsnorm ? "RMSNorm" : "LayerNorm"});
  a.insert(a.end(), {"--position-embedding-type", m.position == PositionEmbedding::rope ? "rope" : "learned_absolute"});
  if (!m.tied_embeddings) a.emplace_back("--untie-embeddings-and-output-weights");
  if (!m.linear_bias) a.emplace_back("--disable-bias-linear");
  if (m.qkv_bias && !m.linear_bias) a.emplace_back("--add-qkv-bias");
  if (!m.dropout) a.insert(a.end(), {"--attention-dropout", "0", "--hidden-dropout", "0"});
  if (m.is_moe()) {
    add(a, "--num-experts", m.moe.experts);
    add(a, "--moe-router-topk", m.moe.top_k);
    add(a, "--moe-ffn-hidden-size", m.moe.expert_ffn_hidden);
    if (m.moe.shared_experts > 0)
      add(a, "--moe-shared-expert-intermediate-size", m.moe.shared_experts * m.moe.expert_ffn_hidden);
    if (m.moe.dense_layers > 0 || m.moe.layer_freq > 1) a.insert(a.end(), {"--moe-layer-freq", moe_layer_pattern(m)});
    // Tessera costs grouped expert GEMMs; Megatron also needs them to recompute moe_act.
    a.emplace_back("--moe-grouped-gemm");
    // Megatron's default dispatcher is allgather: always named.
    a.insert(a.end(), {"--moe-token-dispatcher-type", to_string(p.dispatcher)});
    if (p.dispatcher == MoeDispatcher::flex) {
      // DeepEP cannot pad expert inputs to capacity; HybridEP can (transformer_config.py,
      // d98e8a64). (HybridEP is also the backend for multi-node NVLink domains.)
      a.insert(a.end(), {"--moe-flex-dispatcher-backend", p.capacity_factor > 0 ? "hybridep" : "deepep"});
    }
    if (p.capacity_factor > 0) {
      a.insert(a.end(), {"--moe-expert-capacity-factor", fmt::format("{}", p.capacity_factor),
                         "--moe-pad-expert-input-to-capacity"});
    }
    if (p.force_balance) a.emplace_back("--moe-router-force-load-balancing");
    if (p.overlap_ep) a.emplace_back("--overlap-moe-expert-parallel-comm");
    if (p.delay_wgrad) a.emplace_back("--delay-wgrad-compute");
    if (m.moe.scoring == RouterScoring::sigmoid) a.insert(a.end(), {"--moe-router-score-function", "sigmoid"});
    // Megatron: "Please use --moe-router-pre-softmax when topk is 1" (softmax scoring).
    if (m.moe.top_k == 1 && m.moe.scoring == RouterScoring::softmax) a.emplace_back("--moe-router-pre-softmax");
    if (m.moe.groups > 0) {
      add(a, "--moe-router-num-groups", m.moe.groups);
      add(a, "--moe-router-group-topk", m.moe.topk_groups);
    }
    // With sigmoid scores the router bias is DeepSeek-V3's aux-loss-free expert bias (§2.1.2),
    // Megatron's --moe-router-enable-expert-bias, which Megatron allows only with sigmoid (or
    // sqrtsoftplus) scores; with softmax it is a bias on the router's logits (GPT-OSS), which
    // has no Megatron flag.
    if (m.moe.router_bias && m.moe.scoring == RouterScoring::sigmoid) a.emplace_back("--moe-router-enable-expert-bias");
  }
  if (m.mtp_layers > 0) add(a, "--mtp-num-layers", m.mtp_layers);
  if (m.qk_norm) a.emplace_back("--qk-layernorm");
  if (m.attention == AttentionKind::mla) {
    a.emplace_back("--multi-latent-attention");
    if (m.mla.q_lora_rank > 0) add(a, "--q-lora-rank", m.mla.q_lora_rank);
    add(a, "--kv-lora-rank", m.mla.kv_lora_rank);
    add(a, "--qk-head-dim", m.mla.qk_nope_head_dim);
    add(a, "--qk-pos-emb-head-dim", m.mla.qk_rope_head_dim);
    add(a, "--v-head-dim", m.mla.v_head_dim);
  }
  return a;
}

std::string megatron_command_line(const ModelSpec& model, const Plan& plan, const Workload& workload) {
  std::string line;
  for (const auto& arg : megatron_args(model, plan, workload)) {
    if (!line.empty()) line += ' ';
    const bool quote = arg.find_first_of("()*+[], ") != std::string::npos;
    line += quote ? "\"" + arg + "\"" : arg;
  }
  return line;
}

PlanRequest plan_from_megatron_args(const std::vector<std::string>& args, const ModelSpec& model,
                                    const Cluster& cluster) {
  std::map<std::string, std::string> values;
  std::set<std::string> switches;
  std::string modules;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& flag = args[i];
    if (flag == kRecomputeModulesFlag) {
      for (; i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0; ++i) modules += (modules.empty() ? "" : "+") + args[i + 1];
      if (modules.empty()) throw Error(flag, "missing its modules", "one or more of " + recompute_modules_text(kAllRecomputeModules));
    } else if (value_flags().count(flag)) {
      if (i + 1 >= args.size()) throw Error(flag, "missing its value", "a value after the flag");
      values[flag] = args[++i];
    } else if (switch_flags().count(flag)) {
      switches.insert(flag);
    } else {
      throw Error(flag, "not a Megatron-LM flag Tessera reads",
                  "the parallelism, batch, recompute, precision, overlap and model-shape flags");
    }
  }
  auto get = [&](const char* flag, std::int64_t fallback) {
    const auto it = values.find(flag);
    return it == values.end() ? fallback : parse_integer(it->second, flag);
  };
  // Rebuild the shorthand so one parser validates both.
  std::string s = fmt::format("tp={},pp={},cp={},ep={},mb={},gbs={},seq={}",
                              get("--tensor-model-parallel-size", 1), get("--pipeline-model-parallel-size", 1),
                              get("--context-parallel-size", 1), get("--expert-model-parallel-size", 1),
                              get("--micro-batch-size", 1), get("--global-batch-size", 0),
                              get("--seq-length", model.max_context));
  // Expert tensor parallelism is part of the layout (etp x ep must divide tp x cp x dp).
  if (model.is_moe() && values.count("--expert-tensor-parallel-size"))
    s += ",etp=" + values.at("--expert-tensor-parallel-size");
  const std::int64_t pp = get("--pipeline-model-parallel-size", 1);
  if (values.count("--num-virtual-stages-per-pipeline-rank"))
    s += fmt::format(",vpp={}", get("--num-virtual-stages-per-pipeline-rank", 1));
  else if (values.count("--num-layers-per-virtual-pipeline-stage")) {
    const std::int64_t per_chunk = get("--num-layers-per-virtual-pipeline-stage", 1);
    if (per_chunk < 1 || model.layers % (pp * per_chunk) != 0)
      throw Error("--num-layers-per-virtual-pipeline-stage", "does not divide the layers over the stages",
                  "a divisor of layers / pipeline size");
    s += fmt::format(",vpp={}", model.layers / (pp * per_chunk));
  }
  // Uneven split flags: kept only when they differ from Megatron's default split for this
  // layout, so an exported plan reads back to the same plan.
  PlanRequest layout = load_plan(s + ",sp=0,zero=0", model, cluster);
  const LayerSplit default_split = split_layers(layout.plan, model.layers);
  const std::int64_t first = get("--decoder-first-pipeline-num-layers", 0);
  const std::int64_t last = get("--decoder-last-pipeline-num-layers", 0);
  const bool is_default = (first == 0 || first == default_split.first) && (last == 0 || last == default_split.last);
  if (!is_default) {
    if (first) s += fmt::format(",first_stage_layers={}", first);
    if (last) s += fmt::format(",last_stage_layers={}", last);
  }
  s += fmt::format(",sp={}", switches.count("--sequence-parallel") ? 1 : 0);
  const auto granularity = values.find("--recompute-granularity");
  s += ",recompute=" + (granularity == values.end() ? std::string("none") : granularity->second);
  const auto method = values.find("--recompute-method");
  if (method != values.end() && method->second == "block")
    s += fmt::format(",recompute_layers={}", get("--recompute-num-layers", 0));
  if (!modules.empty()) s += ",recompute_modules=" + modules;
  const bool fsdp = switches.count("--use-torch-fsdp2") || switches.count("--use-megatron-fsdp");
  s += fsdp ? ",zero=3" : (switches.count("--use-distributed-optimizer") ? ",zero=1" : ",zero=0");
  s += values.count("--fp8-format") ? ",precision=fp8" : ",precision=bf16";
  if (values.count("--fp8-format")) {
    // Megatron's default recipe is delayed scaling.
    const auto recipe = values.find("--fp8-recipe");
    s += ",fp8_recipe=" + (recipe == values.end() ? std::string("delayed") : recipe->second);
    if (switches.count("--fp8-param-gather")) s += ",fp8_param_gather=1";
  }
  if (model.is_moe()) {
    // Megatron's default dispatcher is allgather.
    const auto dispatcher = values.find("--moe-token-dispatcher-type");
    s += ",dispatcher=" + (dispatcher == values.end() ? std::string("allgather") : dispatcher->second);
    const auto capacity = values.find("--moe-expert-capacity-factor");
    if (capacity != values.end()) s += ",capacity_factor=" + capacity->second;
    if (switches.count("--moe-router-force-load-balancing")) s += ",force_balance=1";
    if (switches.count("--overlap-moe-expert-parallel-comm")) s += ",overlap_ep=1";
    if (switches.count("--delay-wgrad-compute")) s += ",delay_wgrad=1";
  }
  s += fmt::format(",overlap_grad={},overlap_tp={},overlap_p2p={}", switches.count("--overlap-grad-reduce") ? 1 : 0,
                   switches.count("--tp-comm-overlap") ? 1 : 0, switches.count("--no-overlap-p2p-communication") ? 0 : 1);
  // Megatron gathers parameters per step only with the distributed optimizer; the flag is moot otherwise.
  const bool sharded = fsdp || switches.count("--use-distributed-optimizer");
  s += fmt::format(",overlap_param={}", sharded ? (switches.count("--overlap-param-gather") ? 1 : 0) : 1);
  const auto backend = values.find("--attention-backend");
  s += fmt::format(",flash={}", backend != values.end() && backend->second == "unfused" ? 0 : 1);
  return load_plan(s, model, cluster);
}

std::string torchtitan_toml(const ModelSpec& m, const Plan& p, const Workload& w) {
  const bool fsdp = p.zero == OptimizerSharding::zero3;
  std::string t;
  t += "# torchtitan job config written by Tessera (merge into your model's .toml)\n";
  t += "[training]\n";
  t += fmt::format("local_batch_size = {}\n", w.global_batch / p.dp);
  t += fmt::format("global_batch_size = {}\n", w.global_batch);
  t += fmt::format("seq_len = {}\n", w.seq_len);
  t += fmt::format("mixed_precision_param = \"bfloat16\"\n\n");
  t += "[parallelism]\n";
  // FSDP (ZeRO-3) shards over the data-parallel group; otherwise replicate (DDP).
  t += fmt::format("data_parallel_replicate_degree = {}\n", fsdp ? 1 : p.dp);
  t += fmt::format("data_parallel_shard_degree = {}\n", fsdp ? p.dp : 1);
  t += fmt::format("tensor_parallel_degree = {}\n", p.tp);
  t += fmt::format("enable_async_tensor_parallel = {}\n", p.overlap_tp_comm ? "true" : "false");
  t += fmt::format("pipeline_parallel_degree = {}\n", p.pp);
  if (p.pp > 1) {
    t += fmt::format("pipeline_parallel_schedule = \"{}\"\n", p.vpp > 1 ? "Interleaved1F1B" : "1F1B");
    t += fmt::format("pipeline_parallel_microbatch_size = {}\n", p.micro_batch);
    if (p.vpp > 1) t += fmt::format("pipeline_parallel_layers_per_stage = {}\n", (m.layers + p.pp * p.vpp - 1) / (p.pp * p.vpp));
  }
  t += fmt::format("context_parallel_degree = {}\n", p.cp);
  if (p.ep > 1) t += fmt::format("expert_parallel_degree = {}\n", p.ep);
  t += "\n[activation_checkpoint]\n";
  switch (p.recompute) {
    case Recompute::none: t += "mode = \"none\"\n"; break;
    case Recompute::selective: t += "mode = \"selective\"\nselective_ac_option = \"op\"\n"; break;
    case Recompute::full:
      if (p.recompute_layers > 0) {
        // torchtitan checkpoints every k-th layer: the nearest k to recomputing N of a chunk's layers.
        const std::int64_t chunk = (m.layers + p.pp * p.vpp - 1) / (p.pp * p.vpp);
        const std::int64_t every = std::max<std::int64_t>(1, (chunk + p.recompute_layers / 2) / p.recompute_layers);
        t += fmt::format("mode = \"selective\"\nselective_ac_option = \"{}\"  # full recompute of 1 in {} layers\n", every, every);
      } else {
        t += "mode = \"full\"\n";
      }
      break;
  }
  if (p.precision == Precision::fp8) t += "\n[float8]\nenable_fsdp_float8_all_gather = true\n";
  return t;
}

}  // namespace tessera
