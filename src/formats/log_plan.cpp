#include "formats/log_plan.h"

#include <optional>

#include <fmt/core.h>

#include "core/error.h"
#include "formats/integer_text.h"
#include "formats/megatron_args.h"

namespace tessera {

namespace {

enum class Kind { value, switch_on, list };
struct DumpFlag {
  const char* dest;  // argparse dest as _print_args prints it (arguments.py / TransformerConfig fields, d98e8a64)
  const char* flag;
  Kind kind;
};

// The plan flags of formats/megatron_args.cpp with their dest names. virtual_pipeline_model_parallel_size
// is what validate_args derives from either vpp flag; --no-overlap-p2p-communication is dest
// overlap_p2p_comm (False when given); fp8 is --fp8-format (TransformerConfig.fp8 arg_names).
constexpr DumpFlag kDumpFlags[] = {
    {"tensor_model_parallel_size", "--tensor-model-parallel-size", Kind::value},
    {"pipeline_model_parallel_size", "--pipeline-model-parallel-size", Kind::value},
    {"context_parallel_size", "--context-parallel-size", Kind::value},
    {"expert_model_parallel_size", "--expert-model-parallel-size", Kind::value},
    {"expert_tensor_parallel_size", "--expert-tensor-parallel-size", Kind::value},
    {"virtual_pipeline_model_parallel_size", "--num-virtual-stages-per-pipeline-rank", Kind::value},
    {"micro_batch_size", "--micro-batch-size", Kind::value},
    {"global_batch_size", "--global-batch-size", Kind::value},
    {"seq_length", "--seq-length", Kind::value},
    {"recompute_granularity", "--recompute-granularity", Kind::value},
    {"recompute_method", "--recompute-method", Kind::value},
    {"recompute_num_layers", "--recompute-num-layers", Kind::value},
    {"recompute_modules", "--recompute-modules", Kind::list},
    {"decoder_first_pipeline_num_layers", "--decoder-first-pipeline-num-layers", Kind::value},
    {"decoder_last_pipeline_num_layers", "--decoder-last-pipeline-num-layers", Kind::value},
    {"fp8", "--fp8-format", Kind::value},
    {"fp8_recipe", "--fp8-recipe", Kind::value},
    {"fp8_param_gather", "--fp8-param-gather", Kind::switch_on},
    {"sequence_parallel", "--sequence-parallel", Kind::switch_on},
    {"use_distributed_optimizer", "--use-distributed-optimizer", Kind::switch_on},
    {"use_torch_fsdp2", "--use-torch-fsdp2", Kind::switch_on},
    {"use_megatron_fsdp", "--use-megatron-fsdp", Kind::switch_on},
    {"overlap_grad_reduce", "--overlap-grad-reduce", Kind::switch_on},
    {"overlap_param_gather", "--overlap-param-gather", Kind::switch_on},
    {"tp_comm_overlap", "--tp-comm-overlap", Kind::switch_on},
    {"bf16", "--bf16", Kind::switch_on},
    {"moe_token_dispatcher_type", "--moe-token-dispatcher-type", Kind::value},
    {"moe_expert_capacity_factor", "--moe-expert-capacity-factor", Kind::value},
    {"moe_router_force_load_balancing", "--moe-router-force-load-balancing", Kind::switch_on},
    {"overlap_moe_expert_parallel_comm", "--overlap-moe-expert-parallel-comm", Kind::switch_on},
    {"delay_wgrad_compute", "--delay-wgrad-compute", Kind::switch_on},
};

const std::string* argument(const TrainingLog& log, const std::string& dest) {
  const auto it = log.arguments.find(dest);
  return it == log.arguments.end() || it->second == "None" ? nullptr : &it->second;
}

std::string field_of(const TrainingLog& log, const std::string& dest) {
  const auto line = log.argument_lines.find(dest);
  return log_field(log.file, line == log.argument_lines.end() ? log.arguments_line : line->second) + "." + dest;
}

// "['core_attn', 'mlp']" -> {"core_attn", "mlp"}
std::vector<std::string> python_list(const std::string& text, const TrainingLog& log, const std::string& dest) {
  if (text.size() < 2 || text.front() != '[' || text.back() != ']')
    throw Error(field_of(log, dest), "not a list: '" + text + "'", "a Python list of names");
  std::vector<std::string> out;
  std::string item;
  for (const char c : text.substr(1, text.size() - 2) + ",") {
    if (c == ',') {
      if (!item.empty()) out.push_back(item);
      item.clear();
    } else if (c != '\'' && c != '"' && c != ' ') {
      item += c;
    }
  }
  return out;
}

std::int64_t dump_integer(const TrainingLog& log, const std::string& dest) {
  const std::string* v = argument(log, dest);
  if (!v) throw Error(field_of(log, dest), "missing from the log's argument dump", "a Megatron log with its argument dump");
  return parse_integer(*v, field_of(log, dest));
}

// A size from the dump (layers, widths, heads, experts): positive before anything divides by it
// or derives from it (a garbled dump with num_attention_heads 0 must not reach hidden / heads).
std::int64_t dump_positive(const TrainingLog& log, const std::string& dest) {
  const std::int64_t v = dump_integer(log, dest);
  if (v < 1) throw Error(field_of(log, dest), "got " + std::to_string(v), "a positive integer");
  return v;
}

bool dump_true(const TrainingLog& log, const std::string& dest) {
  const std::string* v = argument(log, dest);
  return v && *v == "True";
}

void require_dump(const TrainingLog& log) {
  if (log.format != "megatron-lm" || log.arguments_line == 0)
    throw Error("log:" + log.file, "no Megatron-LM argument dump",
                "a Megatron-LM log with its '---- arguments ----' block (printed by rank 0)");
}

}  // namespace

std::vector<std::string> megatron_args_from_log(const TrainingLog& log) {
  require_dump(log);
  std::vector<std::string> args;
  for (const DumpFlag& f : kDumpFlags) {
    const std::string* v = argument(log, f.dest);
    if (!v) continue;
    if (f.kind == Kind::switch_on) {
      if (*v == "True") args.push_back(f.flag);
    } else if (f.kind == Kind::list) {
      const auto items = python_list(*v, log, f.dest);
      const std::string* granularity = argument(log, "recompute_granularity");
      if (items.empty() || !granularity || *granularity != "selective") continue;
      args.push_back(f.flag);
      args.insert(args.end(), items.begin(), items.end());
    } else if (std::string(f.dest) == "virtual_pipeline_model_parallel_size") {
      if (*v != "1") args.insert(args.end(), {f.flag, *v});
    } else {
      args.insert(args.end(), {f.flag, *v});
    }
  }
  if (argument(log, "overlap_p2p_comm") && *argument(log, "overlap_p2p_comm") == "False")
    args.push_back("--no-overlap-p2p-communication");
  const bool fsdp = dump_true(log, "use_torch_fsdp2") || dump_true(log, "use_megatron_fsdp");
  if (fsdp && argument(log, "data_parallel_sharding_strategy"))
    args.insert(args.end(), {"--data-parallel-sharding-strategy", *argument(log, "data_parallel_sharding_strategy")});
  if (const std::string* backend = argument(log, "attention_backend")) {
    // printed as the enum member, "AttnBackend.flash"
    const std::size_t dot = backend->find('.');
    args.insert(args.end(), {"--attention-backend", dot == std::string::npos ? *backend : backend->substr(dot + 1)});
  }
  return args;
}

PlanRequest plan_from_megatron_log(const TrainingLog& log, const ModelSpec& model, const Cluster& cluster) {
  const std::vector<std::string> args = megatron_args_from_log(log);
  try {
    return plan_from_megatron_args(args, model, cluster);
  } catch (const Error& e) {
    // The flags were read from the dump, not typed: name the dump's line and field the user can fix.
    for (const DumpFlag& f : kDumpFlags)
      if (e.field() == f.flag) throw Error(field_of(log, f.dest), e.problem(), e.allowed());
    throw Error(log_field(log.file, log.arguments_line) + "." + e.field(), e.problem(), e.allowed());
  }
}

void check_log_matches_model(const TrainingLog& log, const ModelSpec& model, const std::string& model_name) {
  if (log.format != "megatron-lm" || log.arguments_line == 0) return;
  const auto check = [&](const std::string& dest, std::int64_t given, const std::string& what) {
    const std::string* v = argument(log, dest);
    if (v == nullptr) return;
    const std::int64_t logged = parse_integer(*v, field_of(log, dest));
    if (logged != given)
      throw Error(field_of(log, dest), fmt::format("log says {}, {} has {} {}", logged, model_name, what, given),
                  "the model the log ran (leave --model out to read it from the log's argument dump)");
  };
  check("num_layers", model.layers, "layers");
  check("hidden_size", model.hidden, "hidden size");
  check("num_attention_heads", model.heads, "attention heads");
  check("num_experts", model.moe.experts, "experts");
}

ModelSpec model_from_megatron_log(const TrainingLog& log, const std::string& name) {
  require_dump(log);
  ModelSpec m;
  m.name = name;
  m.layers = dump_positive(log, "num_layers");
  m.hidden = dump_positive(log, "hidden_size");
  m.heads = dump_positive(log, "num_attention_heads");
  m.kv_heads = dump_true(log, "group_query_attention") ? dump_positive(log, "num_query_groups") : m.heads;
  m.head_dim = argument(log, "kv_channels") ? dump_positive(log, "kv_channels") : m.hidden / m.heads;
  m.ffn_hidden = dump_positive(log, "ffn_hidden_size");
  m.vocab = dump_positive(log, "padded_vocab_size");
  m.max_context = argument(log, "max_position_embeddings") ? dump_positive(log, "max_position_embeddings")
                                                           : dump_positive(log, "seq_length");
  m.mlp = dump_true(log, "swiglu") ? MlpType::swiglu : MlpType::gelu;
  m.attention = m.kv_heads == m.heads ? AttentionKind::mha : AttentionKind::gqa;
  const std::string* norm = argument(log, "normalization");
  m.norm = norm && *norm == "RMSNorm" ? NormType::rmsnorm : NormType::layernorm;
  const std::string* position = argument(log, "position_embedding_type");
  m.position = position && *position == "rope" ? PositionEmbedding::rope : PositionEmbedding::learned;
  m.tied_embeddings = !dump_true(log, "untie_embeddings_and_output_weights");
  m.linear_bias = dump_true(log, "add_bias_linear");
  m.qkv_bias = !m.linear_bias && dump_true(log, "add_qkv_bias");
  m.qk_norm = dump_true(log, "qk_layernorm");
  if (argument(log, "num_experts")) {
    m.moe.experts = dump_positive(log, "num_experts");
    m.moe.top_k = dump_positive(log, "moe_router_topk");
    m.moe.expert_ffn_hidden = argument(log, "moe_ffn_hidden_size") ? dump_positive(log, "moe_ffn_hidden_size") : m.ffn_hidden;
    if (argument(log, "moe_shared_expert_intermediate_size"))
      m.moe.shared_experts = dump_positive(log, "moe_shared_expert_intermediate_size") / m.moe.expert_ffn_hidden;
    m.ffn_hidden = m.moe.expert_ffn_hidden;  // Megatron sets ffn_hidden_size = moe_ffn_hidden_size when unset
  }
  try {
    m.validate();
  } catch (const Error& e) {
    // The model's own field path ("model.moe.experts") under the dump's file and line.
    throw Error("log:" + log.file + ":" + std::to_string(log.arguments_line) + "." + e.field(), e.problem(), e.allowed());
  }
  return m;
}

std::int64_t log_world_size(const TrainingLog& log) {
  const std::string* v = argument(log, "world_size");
  if (!v) throw Error("log:" + log.file, "the log does not say its GPU count",
                      "Megatron's argument dump (world_size) or torchtitan's device-mesh line");
  return parse_integer(*v, field_of(log, "world_size"));
}

PlanRequest plan_from_torchtitan_job(const TorchtitanJob& job, const ModelSpec& model, const Cluster& cluster) {
  const std::int64_t gpus = cluster.gpus();
  const std::int64_t others = job.dp_replicate * job.tp * job.pp * job.cp;
  const std::int64_t shard = job.dp_shard == -1 && others > 0 ? gpus / others : job.dp_shard;
  const std::int64_t seq = job.max_context;
  if (seq <= 0 || job.tokens_per_microbatch % seq != 0)
    throw Error("training.num_tokens_per_microbatch_per_dp_rank", "not a multiple of max_context_length",
                "micro-batch x max_context_length tokens");
  const std::int64_t per_step = job.tokens_per_step > 0 ? job.tokens_per_step
                                                        : job.tokens_per_microbatch * (job.pp > 1 ? job.num_pp_microbatches : 1) *
                                                              job.dp_replicate * shard;
  if (per_step % seq != 0)
    throw Error("training.num_tokens_per_train_step", "not a multiple of max_context_length", "global batch x max_context_length");
  const char* recompute = job.activation_checkpoint == "FullAC" ? "full"
                          : job.activation_checkpoint == "SelectiveAC" ? "selective" : "none";
  const std::string s = fmt::format("tp={},pp={},dp={},cp={},ep={},mb={},gbs={},seq={},sp={},recompute={},zero={},framework=torchtitan",
                                    job.tp, job.pp, job.dp_replicate * shard, job.cp, job.ep, job.tokens_per_microbatch / seq,
                                    per_step / seq, seq, job.tp > 1 && job.sequence_parallel ? 1 : 0, recompute,
                                    shard > 1 ? 3 : 0);
  return load_plan(s, model, cluster);
}

namespace {

void expect_equal(const TrainingLog& log, const std::string& dest, const std::optional<std::int64_t>& logged,
                  std::int64_t given, const std::string& key, const std::string& plan_name) {
  if (!logged || *logged == given) return;
  throw Error(field_of(log, dest),
              fmt::format("log says {}, {} says {} {}", *logged, plan_name, key, given),
              "a plan that matches the log's launch arguments (or the log of the run that plan describes)");
}

// A logged size; "None" means if_none where Megatron allows it (virtual pipeline size), and is an
// error for the sizes every run has (a dump saying pipeline_model_parallel_size None is garbled).
std::optional<std::int64_t> logged_integer(const TrainingLog& log, const std::string& dest,
                                           std::optional<std::int64_t> if_none) {
  const auto it = log.arguments.find(dest);
  if (it == log.arguments.end()) return std::nullopt;
  if (it->second == "None") {
    if (!if_none) throw Error(field_of(log, dest), "got None", "an integer (every run has this size)");
    return if_none;
  }
  return parse_integer(it->second, field_of(log, dest));
}

}  // namespace

void check_log_matches_plan(const TrainingLog& log, const Plan& plan, const Workload& workload, const std::string& plan_name) {
  const auto check = [&](const std::string& dest, std::int64_t given, const std::string& key,
                         std::optional<std::int64_t> if_none = std::nullopt) {
    expect_equal(log, dest, logged_integer(log, dest, if_none), given, key, plan_name);
  };
  if (log.format == "megatron-lm") {
    check("world_size", plan.gpus(), "GPUs");
    check("tensor_model_parallel_size", plan.tp, "tp");
    check("pipeline_model_parallel_size", plan.pp, "pp");
    check("data_parallel_size", plan.dp, "dp");
    check("context_parallel_size", plan.cp, "cp");
    check("expert_model_parallel_size", plan.ep, "ep");
    check("virtual_pipeline_model_parallel_size", plan.vpp, "vpp", 1);
    check("micro_batch_size", plan.micro_batch, "mb");
    check("global_batch_size", workload.global_batch, "gbs");
    check("seq_length", workload.seq_len, "seq");
    if (const auto it = log.arguments.find("sequence_parallel"); it != log.arguments.end())
      expect_equal(log, "sequence_parallel", it->second == "True", plan.sequence_parallel, "sp", plan_name);
    if (const auto it = log.arguments.find("recompute_granularity"); it != log.arguments.end()) {
      const std::string logged = it->second == "None" ? "none" : it->second;
      if (logged != to_string(plan.recompute))
        throw Error(field_of(log, "recompute_granularity"),
                    fmt::format("log says {}, {} says recompute {}", logged, plan_name, to_string(plan.recompute)),
                    "a plan that matches the log's launch arguments");
    }
  } else {
    check("world_size", plan.gpus(), "GPUs");
    check("tp", plan.tp, "tp");
    check("pp", plan.pp, "pp");
    check("cp", plan.cp, "cp");
    check("ep", plan.ep, "ep");
    const auto replicate = logged_integer(log, "dp_replicate", 1), shard = logged_integer(log, "dp_shard", 1);
    if (replicate && shard) expect_equal(log, "dp_shard", *replicate * *shard, plan.dp, "dp", plan_name);
    check("tokens_per_train_step", workload.global_batch * workload.seq_len, "gbs x seq");
    check("max_context_length", workload.seq_len, "seq");
  }
  // The batch the iteration lines report (Megatron), after any ramp-up.
  if (!log.iterations.empty() && log.iterations.back().global_batch &&
      *log.iterations.back().global_batch != workload.global_batch)
    throw Error(log_field(log.file, log.iterations.back().line) + ".global_batch_size",
                fmt::format("log says {}, {} says gbs {}", *log.iterations.back().global_batch, plan_name, workload.global_batch),
                "a plan that matches the log");
}

}  // namespace tessera
