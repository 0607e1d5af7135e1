#include "export/torchtitan_rules.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <numeric>
#include <string_view>

#include "core/error.h"
#include "search/framework_support.h"

namespace tessera {
namespace {

// ---- reading the recipe back ------------------------------------------------------------------

bool identifier_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// The raw text of `key=value` (a keyword argument or a --flag=value): up to the next ',', ')' or
// newline outside brackets and quotes. npos-safe: "" when the key is absent.
std::string raw_value(std::string_view text, std::string_view key) {
  for (std::size_t at = text.find(key); at != std::string_view::npos; at = text.find(key, at + 1)) {
    const std::size_t eq = at + key.size();
    if ((at > 0 && identifier_char(text[at - 1])) || eq >= text.size() || text[eq] != '=') continue;
    if (eq + 1 < text.size() && text[eq + 1] == '=') continue;
    int depth = 0;
    bool quoted = false;
    std::size_t end = eq + 1;
    for (; end < text.size(); ++end) {
      const char c = text[end];
      if (c == '"') quoted = !quoted;
      if (quoted) continue;
      if (c == '[' || c == '(') ++depth;
      if ((c == ']' || c == ')') && depth-- == 0) break;
      if ((c == ',' || c == '\n') && depth == 0) break;
      // A space ends a --flag=value (next flag, line continuation, comment), not "8 * 8192".
      const char next = end + 1 < text.size() ? text[end + 1] : '\n';
      if (c == ' ' && depth == 0 && (next == '-' || next == '\\' || next == '#' || next == ' ')) break;
    }
    return std::string(text.substr(eq + 1, end - eq - 1));
  }
  return "";
}

std::string unquoted(std::string v) {
  if (v.size() >= 2 && v.front() == '"' && v.back() == '"') return v.substr(1, v.size() - 2);
  return v;
}

// "8 * 8192" -> 65536; "" -> fallback. Anything else (a name, a float, an integer past int64) is
// an Error naming the key: the reader used to loop forever on a character it did not expect.
std::int64_t int_value(std::string_view text, std::string_view key, std::int64_t fallback) {
  const std::string v = raw_value(text, key);
  if (v.empty()) return fallback;
  const auto refuse = [&]() -> std::int64_t {
    throw Error(std::string(key), "'" + v.substr(0, 80) + "' is not an integer or a product of integers",
                "an integer such as 8192, or a product such as 8 * 8192, within int64");
  };
  std::int64_t product = 1;
  std::size_t i = 0;
  bool factor_expected = true;
  while (i < v.size()) {
    if (v[i] == ' ') {
      ++i;
    } else if (v[i] == '*' && !factor_expected) {
      factor_expected = true;
      ++i;
    } else if (factor_expected && (v[i] == '-' || std::isdigit(static_cast<unsigned char>(v[i])))) {
      const bool negative = v[i] == '-';
      if (negative) ++i;
      if (i == v.size() || !std::isdigit(static_cast<unsigned char>(v[i]))) return refuse();
      std::int64_t n = 0;
      for (; i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])); ++i)
        if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, v[i] - '0', &n)) return refuse();
      if (__builtin_mul_overflow(product, negative ? -n : n, &product)) return refuse();
      factor_expected = false;
    } else {
      return refuse();
    }
  }
  return factor_expected ? refuse() : product;
}

bool bool_value(std::string_view text, std::string_view key, bool fallback) {
  const std::string v = raw_value(text, key);
  return v.empty() ? fallback : v == "True";
}

std::string string_value(std::string_view text, std::string_view key, const std::string& fallback) {
  const std::string v = raw_value(text, key);
  return v.empty() ? fallback : unquoted(v);
}

// "_model_parts(80, [19, 20, 21, 20])" -> {19, 20, 21, 20}.
std::vector<std::int64_t> parts_value(std::string_view text) {
  const std::string v = raw_value(text, "module_fqns_per_model_part");
  std::vector<std::int64_t> parts;
  const std::size_t open = v.find('[');
  if (open == std::string::npos) return parts;
  std::int64_t n = 0;
  bool digits = false;
  for (std::size_t i = open + 1; i < v.size() && v[i] != ']'; ++i) {
    if (std::isdigit(static_cast<unsigned char>(v[i]))) {
      if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, v[i] - '0', &n))
        throw Error("module_fqns_per_model_part", "a layer count past int64", "layer counts such as [19, 20, 21, 20]");
      digits = true;
    } else if (v[i] == ',' && digits) {
      parts.push_back(n);
      n = 0;
      digits = false;
    }
  }
  if (digits) parts.push_back(n);
  return parts;
}

// "from torchtitan.models.llama3 import model_registry" -> "llama3"; the first string argument of
// model_registry( -> the flavor.
void read_model(std::string_view text, TorchtitanJob& job) {
  constexpr std::string_view kFrom = "from torchtitan.models.", kImport = " import model_registry";
  if (const std::size_t end = text.find(kImport); end != std::string_view::npos) {
    const std::size_t at = text.rfind(kFrom, end);
    if (at != std::string_view::npos) job.module = std::string(text.substr(at + kFrom.size(), end - at - kFrom.size()));
  }
  if (const std::size_t call = text.find("model_registry("); call != std::string_view::npos) {
    const std::size_t open = text.find('"', call), close = text.find('"', open + 1);
    if (open != std::string_view::npos && close != std::string_view::npos)
      job.flavor = std::string(text.substr(open + 1, close - open - 1));
  }
}

// ---- the rules -----------------------------------------------------------------------------

std::int64_t dp_shard(const TorchtitanJob& j) {
  const std::int64_t rest = j.dp_replicate * j.cp * j.tp * j.pp;
  return j.dp_shard < 0 && rest > 0 ? (j.nnodes * j.nproc_per_node) / rest : j.dp_shard;
}
std::int64_t world(const TorchtitanJob& j) { return j.nnodes * j.nproc_per_node; }

const TorchtitanFlavor* flavor_of(const TorchtitanJob& j) {
  for (const TorchtitanFlavor& f : torchtitan_flavors())
    if (j.module == f.module && j.flavor == f.flavor) return &f;
  return nullptr;
}

bool is_single_stage(const std::string& s) { return s == "GPipe" || s == "1F1B"; }
bool is_v_schedule(const std::string& s) { return s == "ZBVZeroBubble" || s == "DualPipeV"; }
bool is_known_schedule(const std::string& s) {
  return is_single_stage(s) || is_v_schedule(s) || s == "Interleaved1F1B" || s == "LoopedBFS" ||
         s == "InterleavedZeroBubble";
}

// Each predicate returns true when the job breaks the rule.
constexpr std::array<TorchtitanRule, 26> kTorchtitanRules{{
    {"tt-degrees", "torchtitan/distributed/parallel_dims.py :: ParallelDims._validate",
     [](const TorchtitanJob& j, const TorchtitanTarget&) {
       return std::min({j.dp_replicate, j.cp, j.tp, j.pp, j.ep}) < 1 || (j.dp_shard != -1 && j.dp_shard < 1);
     },
     "degrees must be >= 1 (dp_shard: -1 or >= 1)"},
    {"tt-world-size", "torchtitan/distributed/parallel_dims.py :: ParallelDims._validate",
     [](const TorchtitanJob& j, const TorchtitanTarget&) {
       return j.dp_replicate * dp_shard(j) * j.cp * j.tp * j.pp != world(j);
     },
     "dp_replicate * dp_shard * cp * tp * pp must equal WORLD_SIZE"},
    {"tt-launch-gpus", "torchtitan/config/README.md (NGPU must match the product of the degrees); run_train.sh",
     [](const TorchtitanJob& j, const TorchtitanTarget& t) { return world(j) != t.gpus; },
     "torchrun must start one process per GPU of the cluster"},
    {"tt-ep-divides", "torchtitan/distributed/parallel_dims.py :: ParallelDims._validate",
     [](const TorchtitanJob& j, const TorchtitanTarget&) { return j.ep < 1 || (dp_shard(j) * j.cp * j.tp) % j.ep != 0; },
     "expert_parallel_degree must divide dp_shard * cp * tp"},
    {"tt-flavor", "torchtitan/models/<module>/__init__.py :: model_registry (<module>_configs[flavor])",
     [](const TorchtitanJob& j, const TorchtitanTarget&) { return flavor_of(j) == nullptr; },
     "the module's model_registry has no such flavor"},
    {"tt-tp-heads", "torchtitan/models/common/decoder.py :: Decoder.Config.update_from_config",
     [](const TorchtitanJob& j, const TorchtitanTarget&) {
       const TorchtitanFlavor* f = flavor_of(j);
       return f != nullptr && j.tp > 0 && (f->heads % j.tp != 0 || f->kv_heads % j.tp != 0);
     },
     "tensor_parallel_degree must divide n_heads and n_kv_heads"},
    {"tt-token-divisor", "torchtitan/trainer.py :: Trainer.__init__ (dense activation token-count evenness)",
     [](const TorchtitanJob& j, const TorchtitanTarget&) {
       const std::int64_t divisor = (j.sequence_parallel ? j.tp : 1) * (j.cp > 1 ? 2 * j.cp : 1);
       return divisor < 1 || j.tokens_per_microbatch % divisor != 0;
     },
     "tokens per micro-batch must divide by tp (with sequence parallel) x 2cp (with cp)"},
    {"tt-token-counts", "torchtitan/config/configs.py :: TrainingConfig.__post_init__",
     [](const TorchtitanJob& j, const TorchtitanTarget&) {
       return j.tokens_per_microbatch <= 0 || j.max_context <= 0 || (j.tokens_per_step != -1 && j.tokens_per_step <= 0);
     },
     "token counts and max_context_length must be positive (num_tokens_per_train_step: -1 or > 0)"},
    {"tt-pp-microbatches", "torchtitan/trainer.py :: Trainer.Config.__post_init__",
     [](const TorchtitanJob& j, const TorchtitanTarget&) { return j.num_pp_microbatches <= 0; },
     "parallelism.num_pp_microbatches must be greater than 0"},
    {"tt-step-divisible", "torchtitan/trainer.py :: Trainer.__init__ (gradient_accumulation_steps)",
     [](const TorchtitanJob& j, const TorchtitanTarget&) {
       const std::int64_t per_rank = j.tokens_per_microbatch * (j.pp > 1 ? j.num_pp_microbatches : 1);
       const std::int64_t per_iteration = per_rank * j.dp_replicate * dp_shard(j);
       const std::int64_t step = j.tokens_per_step < 0 ? per_iteration : j.tokens_per_step;
       return per_iteration <= 0 || step % per_iteration != 0;
     },
     "num_tokens_per_train_step must divide by the tokens of one gradient accumulation iteration"},
    {"tt-cuda-graphs-pp", "torchtitan/trainer.py :: Trainer.Config._validate_cuda_graphs",
     [](const TorchtitanJob& j, const TorchtitanTarget&) { return !j.disable_cuda_graphs && j.pp > 1; },
     "CUDA graphs do not support pipeline parallelism: set training.disable_cuda_graphs"},
    {"tt-cuda-graphs-ep", "torchtitan/trainer.py :: Trainer.Config._validate_cuda_graphs",
     [](const TorchtitanJob& j, const TorchtitanTarget&) { return !j.disable_cuda_graphs && j.ep > 1; },
     "CUDA graphs need a host-sync-free EP dispatcher; the standard one is not: disable them"},
    {"tt-async-tp-compile", "torchtitan/config/configs.py :: CompileConfig.__post_init__",
     [](const TorchtitanJob& j, const TorchtitanTarget&) { return j.async_tp && !j.compile; },
     "async TP requires compile.enable with 'model' in compile.components"},
    {"tt-cp-flex", "torchtitan/models/common/decoder.py :: Decoder.Config.update_from_config",
     [](const TorchtitanJob& j, const TorchtitanTarget&) { return j.cp > 1 && j.attn_backend != "flex"; },
     "context parallelism is not supported with SDPA or varlen attention: use flex"},
    {"tt-cp-load-balancer", "torchtitan/config/configs.py :: ParallelismConfig.__post_init__; distributed/context_parallel/api.py",
     [](const TorchtitanJob& j, const TorchtitanTarget&) {
       return j.cp_load_balancer != "headtail" && j.cp_load_balancer != "ptrr" && j.cp_load_balancer != "None";
     },
     "context_parallel_load_balancer must be headtail, ptrr or None"},
    {"tt-mtp-layout", "torchtitan/models/deepseek_v3/mtp.py :: MTPDecoder.Config.update_from_config",
     [](const TorchtitanJob& j, const TorchtitanTarget&) { return j.num_mtp_layers > 0 && (j.pp > 1 || j.cp > 1); },
     "MTP does not support pipeline or context parallelism yet"},
    {"tt-mtp-module", "torchtitan/models/deepseek_v3/__init__.py :: model_registry(num_mtp_layers)",
     [](const TorchtitanJob& j, const TorchtitanTarget&) { return j.num_mtp_layers > 0 && j.module != "deepseek_v3"; },
     "only deepseek_v3's model_registry builds MTP layers"},
    {"tt-schedule", "torch/distributed/pipelining/schedules.py :: get_schedule_class (via pipeline_parallel.py)",
     [](const TorchtitanJob& j, const TorchtitanTarget&) { return j.pp > 1 && !is_known_schedule(j.schedule); },
     "unknown pipeline schedule"},
    {"tt-interleaved-rounds", "torch/distributed/pipelining/schedules.py :: ScheduleInterleaved1F1B.__init__ (v2.10)",
     [](const TorchtitanJob& j, const TorchtitanTarget&) {
       if (j.pp <= 1 || j.schedule != "Interleaved1F1B") return false;
       const std::int64_t rounds = std::max<std::int64_t>(1, j.num_pp_microbatches / j.pp);
       return j.num_pp_microbatches % rounds != 0;
     },
     "Interleaved 1F1B needs the micro-batch count to be a multiple of max(1, micro-batches / pp)"},
    {"tt-parts-per-rank", "torchtitan/distributed/pipeline_parallel.py :: _get_pp_rank_to_stage_indices_mapping",
     [](const TorchtitanJob& j, const TorchtitanTarget&) {
       return j.pp > 1 && !j.layers_per_part.empty() && static_cast<std::int64_t>(j.layers_per_part.size()) % j.pp != 0;
     },
     "the number of model parts must divide by pipeline_parallel_degree"},
    {"tt-parts-schedule", "torchtitan/distributed/pipeline_parallel.py :: _get_pipeline_metadata",
     [](const TorchtitanJob& j, const TorchtitanTarget&) {
       if (j.pp <= 1 || j.layers_per_part.empty()) return false;
       const std::int64_t per_rank = static_cast<std::int64_t>(j.layers_per_part.size()) / j.pp;
       if (is_single_stage(j.schedule)) return per_rank != 1;
       return is_v_schedule(j.schedule) ? per_rank != 2 : per_rank < 2;
     },
     "single-stage schedules take 1 model part per rank, looped ones at least 2, V schedules 2"},
    {"tt-parts-cover", "torchtitan/distributed/pipeline_parallel.py :: _generate_llm_fqn_per_model_part",
     [](const TorchtitanJob& j, const TorchtitanTarget&) {
       const TorchtitanFlavor* f = flavor_of(j);
       if (j.layers_per_part.empty() || f == nullptr) return false;
       const std::int64_t sum = std::accumulate(j.layers_per_part.begin(), j.layers_per_part.end(), std::int64_t{0});
       const bool empty_middle = j.layers_per_part.size() > 2 &&
                                 std::any_of(j.layers_per_part.begin() + 1, j.layers_per_part.end() - 1,
                                             [](std::int64_t n) { return n < 1; });
       return sum != f->layers || empty_middle;
     },
     "model parts must hold every layer once, each middle part at least one"},
    {"tt-reshard-policy", "torchtitan/distributed/fsdp.py :: get_fsdp_reshard_after_forward_policy",
     [](const TorchtitanJob& j, const TorchtitanTarget&) {
       return j.reshard_after_forward != "default" && j.reshard_after_forward != "always" && j.reshard_after_forward != "never";
     },
     "fsdp_reshard_after_forward must be default, always or never"},
    {"tt-float8-hardware", "torchtitan/components/quantization/float8.py :: Float8LinearConverter.__init__",
     [](const TorchtitanJob& j, const TorchtitanTarget& t) { return (j.float8_linear || j.float8_grouped) && !t.fp8; },
     "float8 needs NVIDIA SM89+ or AMD gfx942+"},
    {"tt-mxfp8-hardware", "torchtitan/components/quantization/mx.py :: MXFP8LinearConverter.__init__",
     [](const TorchtitanJob& j, const TorchtitanTarget& t) { return (j.mxfp8_linear || j.mxfp8_grouped) && !t.mxfp8; },
     "MXFP8 is only supported on SM100 or later"},
    {"tt-float8-recipe", "torchtitan/components/quantization/float8.py :: Float8LinearConverter.Config.recipe_name",
     [](const TorchtitanJob& j, const TorchtitanTarget&) {
       return j.float8_linear && !j.float8_recipe.empty() && j.float8_recipe != "rowwise" &&
              j.float8_recipe != "rowwise_with_gw_hp";
     },
     "float8 recipe_name must be rowwise or rowwise_with_gw_hp"},
}};

}  // namespace

TorchtitanJob parse_torchtitan_job(const std::string& recipe_py, const std::string& launch_command) {
  const std::string_view r = recipe_py;
  TorchtitanJob j;
  read_model(r, j);
  j.attn_backend = string_value(r, "attn_backend", "");
  j.num_mtp_layers = int_value(r, "num_mtp_layers", 0);
  j.float8_linear = r.find("Float8LinearConverter.Config(") != std::string_view::npos;
  j.float8_grouped = r.find("Float8GroupedExpertsConverter.Config(") != std::string_view::npos;
  j.mxfp8_linear = r.find("MXFP8LinearConverter.Config(") != std::string_view::npos;
  j.mxfp8_grouped = r.find("MXFP8GroupedExpertsConverter.Config(") != std::string_view::npos;
  j.float8_recipe = string_value(r, "recipe_name", "");
  j.tokens_per_microbatch = int_value(r, "num_tokens_per_microbatch_per_dp_rank", j.tokens_per_microbatch);
  j.tokens_per_step = int_value(r, "num_tokens_per_train_step", j.tokens_per_step);
  j.max_context = int_value(r, "max_context_length", j.max_context);
  j.disable_cuda_graphs = bool_value(r, "disable_cuda_graphs", j.disable_cuda_graphs);
  j.enable_cpu_offload = bool_value(r, "enable_cpu_offload", j.enable_cpu_offload);
  j.dp_replicate = int_value(r, "data_parallel_replicate_degree", j.dp_replicate);
  j.dp_shard = int_value(r, "data_parallel_shard_degree", j.dp_shard);
  j.reshard_after_forward = string_value(r, "fsdp_reshard_after_forward", j.reshard_after_forward);
  j.tp = int_value(r, "tensor_parallel_degree", j.tp);
  j.sequence_parallel = bool_value(r, "enable_sequence_parallel", j.sequence_parallel);
  j.pp = int_value(r, "pipeline_parallel_degree", j.pp);
  j.schedule = string_value(r, "pipeline_parallel_schedule", j.schedule);
  j.num_pp_microbatches = int_value(r, "num_pp_microbatches", j.num_pp_microbatches);
  j.layers_per_part = parts_value(r);
  j.cp = int_value(r, "context_parallel_degree", j.cp);
  j.cp_load_balancer = string_value(r, "context_parallel_load_balancer", j.cp_load_balancer);
  j.ep = int_value(r, "expert_parallel_degree", j.ep);
  const std::string ac = raw_value(r, "activation_checkpoint");
  if (!ac.empty()) j.activation_checkpoint = ac.substr(0, ac.find('.'));
  j.compile = bool_value(r, "enable", j.compile);
  j.async_tp = bool_value(r, "enable_async_tensor_parallel", j.async_tp);
  j.nnodes = int_value(launch_command, "--nnodes", 1);
  j.nproc_per_node = int_value(launch_command, "--nproc_per_node", 1);
  return j;
}

TorchtitanTarget torchtitan_target(const Cluster& cluster) {
  return {cluster.gpus(), cluster.gpu.fp8_tflops > 0, cluster.gpu.mxfp8};
}

std::span<const TorchtitanRule> torchtitan_rules() { return kTorchtitanRules; }

std::vector<const TorchtitanRule*> torchtitan_violations(const TorchtitanJob& job, const TorchtitanTarget& target) {
  std::vector<const TorchtitanRule*> broken;
  for (const TorchtitanRule& rule : kTorchtitanRules)
    if (rule.violated(job, target)) broken.push_back(&rule);
  return broken;
}

}  // namespace tessera
