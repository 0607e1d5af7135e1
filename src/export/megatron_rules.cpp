#include "export/megatron_rules.h"

#include <algorithm>
#include <cstdlib>
#include <set>

#include "core/error.h"

namespace tessera {

namespace {

// Source files of the rules (Megatron-LM d98e8a64).
using megatron_source::kArgs;
constexpr const char* kArgUtils = "megatron/training/argument_utils.py core_transformer_config_from_args";
using megatron_source::kConfig;
constexpr const char* kLayout = "megatron/core/transformer/pipeline_parallel_layer_layout.py validate_layer_layout";
constexpr const char* kLayerSpecs = "megatron/core/models/gpt/gpt_layer_specs.py get_gpt_decoder_layer_specs";
constexpr const char* kVocab = "megatron/core/tensor_parallel/utils.py vocab_range_from_global_vocab_size";
constexpr const char* kSaveCheckpoint = "megatron/training/checkpointing.py save_checkpoint";

bool is_flag(const std::string& token) { return token.size() > 2 && token.rfind("--", 0) == 0; }

const std::vector<std::string>& no_values() {
  static const std::vector<std::string> empty;
  return empty;
}

// ---- derived settings ----

bool interleaved(const MegatronArgs& a) { return a.vpp() > 1; }
bool bias_linear(const MegatronArgs& a) { return !a.has("--disable-bias-linear"); }
bool grad_accumulation_fusion(const MegatronArgs& a) { return !a.has("--no-gradient-accumulation-fusion"); }
bool overlap_p2p(const MegatronArgs& a) { return !a.has("--no-overlap-p2p-communication"); }
std::string dispatcher(const MegatronArgs& a) { return a.text("--moe-token-dispatcher-type", "allgather"); }
std::string flex_backend(const MegatronArgs& a) { return a.text("--moe-flex-dispatcher-backend", "deepep"); }
std::string granularity(const MegatronArgs& a) { return a.text("--recompute-granularity", ""); }
std::string score_function(const MegatronArgs& a) { return a.text("--moe-router-score-function", "softmax"); }
std::string ckpt_format(const MegatronArgs& a) { return a.text("--ckpt-format", "torch_dist"); }
std::string position_type(const MegatronArgs& a) { return a.text("--position-embedding-type", "learned_absolute"); }
std::int64_t mtp_layers(const MegatronArgs& a) { return a.integer("--mtp-num-layers", 0); }
bool has_module(const MegatronArgs& a, const char* module) {
  const auto m = a.recompute_modules();
  return std::find(m.begin(), m.end(), module) != m.end();
}
bool any_vpp_flag(const MegatronArgs& a) {
  return a.has("--num-layers-per-virtual-pipeline-stage") || a.has("--num-virtual-stages-per-pipeline-rank") ||
         a.has("--pipeline-model-parallel-layout");
}
bool uneven_flags(const MegatronArgs& a) {
  return a.has("--decoder-first-pipeline-num-layers") || a.has("--decoder-last-pipeline-num-layers");
}
// The embedding and / or the loss accounted as layers of the split: how many of them.
std::int64_t accounted_layers(const MegatronArgs& a) {
  return (a.has("--account-for-embedding-in-pipeline-split") ? 1 : 0) +
         (a.has("--account-for-loss-in-pipeline-split") ? 1 : 0);
}
// validate_args: with tp = 1, --sequence-parallel is silently switched off (not an error).
bool sequence_parallel(const MegatronArgs& a) { return a.has("--sequence-parallel") && a.tp() > 1; }

// The uneven split (num_layers_in_first/last_pipeline_stage): the middle ranks' layers and count.
struct MiddleRanks {
  std::int64_t layers = 0;
  std::int64_t ranks = 0;
};
MiddleRanks middle_ranks(const MegatronArgs& a) {
  MiddleRanks m{a.layers(), a.pp()};
  for (const char* flag : {"--decoder-first-pipeline-num-layers", "--decoder-last-pipeline-num-layers"}) {
    if (!a.has(flag)) continue;
    m.layers -= a.integer(flag, 0);
    m.ranks -= 1;
  }
  return m;
}
bool uneven_applies(const MegatronArgs& a) { return !a.has("--pipeline-model-parallel-layout") && uneven_flags(a); }

// The layout as stages, or empty when absent or unparsable (the grammar rule reports that).
std::vector<std::string> layout_stages(const MegatronArgs& a) {
  if (!a.has("--pipeline-model-parallel-layout")) return {};
  try {
    return megatron_layout_stages(a.text("--pipeline-model-parallel-layout", ""));
  } catch (const Error&) {
    return {};
  }
}
std::string flat_layout(const std::vector<std::string>& stages) {
  std::string flat;
  for (const auto& s : stages) flat += s;
  return flat;
}
bool layout_checked(const MegatronArgs& a) {
  const auto stages = layout_stages(a);
  return !stages.empty() && static_cast<std::int64_t>(stages.size()) % a.pp() == 0;
}
std::int64_t count(const std::string& s, char c) { return std::count(s.begin(), s.end(), c); }

bool layout_mtp_misplaced(const MegatronArgs& a) {
  const auto stages = layout_stages(a);
  const std::int64_t pp = a.pp();
  const std::int64_t vpp = static_cast<std::int64_t>(stages.size()) / pp;
  const std::string flat = flat_layout(stages);
  const std::size_t first_mtp = flat.find('m');
  if (first_mtp != std::string::npos && flat.find('t', first_mtp) != std::string::npos) return true;
  for (std::size_t k = 0; k < stages.size(); ++k) {
    const std::int64_t chunk = static_cast<std::int64_t>(k) / pp;
    const std::int64_t m = count(stages[k], 'm');
    if (m > 0 && chunk < vpp - 1) return true;              // MTP only in a rank's last chunk
    // All MTP layers in one chunk (a count that differs from --mtp-num-layers is layout-mtp-count).
    if (m > 0 && mtp_layers(a) > 0 && m != mtp_layers(a)) return true;
  }
  return false;
}

const std::set<std::string>& allowed_recompute_modules() {
  static const std::set<std::string> modules = {"core_attn", "moe_act", "layernorm", "mla_up_proj", "mlp", "moe",
                                                "shared_experts", "gdn_norm_out", "gdp_in_proj", "gdp_qkv", "mhc"};
  return modules;
}

// Per-rule predicates that need more than one line.
bool cuda_connections_not_one(const MegatronArgs& a) {
  // Pre-Blackwell rule (get_device_arch_version() < 10); harmless on Blackwell, where it is lifted.
  const bool model_parallel = a.tp() > 1 || a.cp() > 1;
  const bool exempt = a.torch_fsdp2() || a.megatron_fsdp() || a.has("--overlap-moe-expert-parallel-comm");
  return model_parallel && !exempt && a.env("CUDA_DEVICE_MAX_CONNECTIONS") != "1";
}
bool vpp_per_stage_does_not_divide(const MegatronArgs& a) {
  if (!a.has("--num-layers-per-virtual-pipeline-stage") || a.has("--pipeline-model-parallel-layout")) return false;
  const std::int64_t per_chunk = a.integer("--num-layers-per-virtual-pipeline-stage", 1);
  if (a.layers() % a.pp() != 0 || per_chunk < 1) return true;
  return (a.layers() / a.pp()) % per_chunk != 0;
}
bool moe_layer_freq_length_wrong(const MegatronArgs& a) {
  if (!a.has("--moe-layer-freq") || a.experts() == 0) return false;
  const std::string text = a.text("--moe-layer-freq", "1");
  if (text.empty() || text.front() != '[') return false;  // an integer N
  return 1 + static_cast<std::int64_t>(std::count(text.begin(), text.end(), ',')) != a.layers();
}
bool capacity_with_wrong_balancing(const MegatronArgs& a) {
  if (!a.has("--moe-expert-capacity-factor") || a.number("--moe-expert-capacity-factor", -1) < 0) return false;
  static const std::set<std::string> allowed = {"aux_loss", "seq_aux_loss", "global_aux_loss", "none"};
  const auto& types = a.values("--moe-router-load-balancing-type");
  if (types.empty()) return false;  // default aux_loss
  return std::any_of(types.begin(), types.end(), [](const std::string& t) { return !allowed.count(t); });
}
bool aux_loss_lists_differ(const MegatronArgs& a) {
  const auto n_types = a.values("--moe-router-load-balancing-type").size();
  const auto n_coeffs = a.values("--moe-aux-loss-coeff").size();
  return n_types > 1 && n_coeffs != n_types;
}

}  // namespace

// ---- MegatronArgs ----

MegatronArgs::MegatronArgs(const std::vector<std::string>& args, std::map<std::string, std::string> env)
    : env_(std::move(env)) {
  std::string current;
  for (const auto& token : args) {
    if (is_flag(token)) {
      current = token;
      values_[current];
    } else if (!current.empty()) {
      values_[current].push_back(token);
    }
  }
}

std::string MegatronArgs::text(const std::string& flag, const std::string& fallback) const {
  const auto it = values_.find(flag);
  return it == values_.end() || it->second.empty() ? fallback : it->second.front();
}

std::int64_t MegatronArgs::integer(const std::string& flag, std::int64_t fallback) const {
  const std::string t = text(flag, "");
  return t.empty() ? fallback : std::strtoll(t.c_str(), nullptr, 10);
}

double MegatronArgs::number(const std::string& flag, double fallback) const {
  const std::string t = text(flag, "");
  return t.empty() ? fallback : std::strtod(t.c_str(), nullptr);
}

const std::vector<std::string>& MegatronArgs::values(const std::string& flag) const {
  const auto it = values_.find(flag);
  return it == values_.end() ? no_values() : it->second;
}

std::string MegatronArgs::env(const std::string& name) const {
  const auto it = env_.find(name);
  return it == env_.end() ? "" : it->second;
}

std::int64_t MegatronArgs::vpp() const {
  if (has("--pipeline-model-parallel-layout")) {
    const auto stages = layout_stages(*this);
    return stages.empty() ? 1 : std::max<std::int64_t>(1, static_cast<std::int64_t>(stages.size()) / pp());
  }
  if (has("--num-virtual-stages-per-pipeline-rank")) return integer("--num-virtual-stages-per-pipeline-rank", 1);
  if (has("--num-layers-per-virtual-pipeline-stage")) {
    const std::int64_t per_chunk = integer("--num-layers-per-virtual-pipeline-stage", 1);
    return per_chunk > 0 ? layers() / pp() / per_chunk : 1;
  }
  return 1;
}

bool MegatronArgs::distributed_optimizer() const {
  // validate_args: Megatron-FSDP version 1 turns the distributed optimizer on.
  return has("--use-distributed-optimizer") || (megatron_fsdp() && integer("--megatron-fsdp-version", 1) == 1);
}

std::vector<std::string> MegatronArgs::recompute_modules() const {
  if (granularity(*this) != "selective") return {};
  const auto& m = values("--recompute-modules");
  return m.empty() ? std::vector<std::string>{"core_attn"} : m;  // TransformerConfig default
}

// ---- the layout grammar ----

namespace {

// A layout's repeat counts stay below this (Megatron's layouts count layers and stages).
constexpr long kMaxLayoutRepeat = 100000;

// One pass of parse_str_to_list's re.sub: "(body)*n" (body without ')') when `groups`, else
// "c*n" (one character), each replaced by n copies; anything else is kept.
std::string expand_repeats(const std::string& s, bool groups) {
  const auto is_digit = [&](std::size_t i) { return i < s.size() && s[i] >= '0' && s[i] <= '9'; };
  std::string out;
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t body_begin = i, body_size = 1, star = i + 1;
    if (groups) {
      const std::size_t close = s[i] == '(' ? s.find(')', i + 1) : std::string::npos;
      body_begin = i + 1;
      body_size = close == std::string::npos ? 0 : close - i - 1;
      star = close == std::string::npos ? s.size() : close + 1;
    }
    if (body_size == 0 || star >= s.size() || s[star] != '*' || !is_digit(star + 1)) {
      out += s[i++];
      continue;
    }
    long n = 0;
    std::size_t j = star + 1;
    for (; is_digit(j); ++j) {
      n = n * 10 + (s[j] - '0');
      if (n > kMaxLayoutRepeat)
        throw Error("--pipeline-model-parallel-layout", "repeat count above " + std::to_string(kMaxLayoutRepeat),
                    "counts of layers or stages");
    }
    for (long k = 0; k < n; ++k) out.append(s, body_begin, body_size);
    i = j;
  }
  return out;
}

}  // namespace

std::vector<std::string> megatron_layout_stages(const std::string& layout) {
  std::string s;
  for (char c : layout)
    if (c != ',') s += c;
  // Unroll "(...)*n", then "x*n", as parse_str_to_list does with re.sub.
  s = expand_repeats(expand_repeats(s, /*groups=*/true), /*groups=*/false);
  std::vector<std::string> stages(1);
  for (char c : s) {
    if (c == '|') {
      stages.emplace_back();
    } else if (c == 'E' || c == 't' || c == 'm' || c == 'L') {
      stages.back() += c;
    } else {
      throw Error("--pipeline-model-parallel-layout", std::string("invalid layer character '") + c + "'",
                  "E (embedding), t (transformer layer), m (MTP layer), L (loss), | between stages");
    }
  }
  return stages;
}

// ---- the table ----

const std::vector<MegatronRule>& megatron_rules() {
  using A = const MegatronArgs&;
  static const std::vector<MegatronRule> rules = with_offload_rules({
      // Pipeline: virtual stages and uneven splits.
      {"vpp-flags-exclusive", kArgs,
       [](A a) {
         return a.has("--num-layers-per-virtual-pipeline-stage") + a.has("--num-virtual-stages-per-pipeline-rank") +
                    a.has("--pipeline-model-parallel-layout") > 1;
       },
       "at most one of --num-layers-per-virtual-pipeline-stage, --num-virtual-stages-per-pipeline-rank, "
       "--pipeline-model-parallel-layout"},
      {"layout-grammar", kLayout,
       [](A a) { return a.has("--pipeline-model-parallel-layout") && layout_stages(a).empty(); },
       "--pipeline-model-parallel-layout uses only E, t, m, L, |, (...)*n"},
      {"layout-divides-pp", kArgs,
       [](A a) { return !layout_stages(a).empty() && static_cast<std::int64_t>(layout_stages(a).size()) % a.pp() != 0; },
       "the layout's stage count must be divisible by --pipeline-model-parallel-size"},
      {"layout-excludes-uneven-flags", kConfig,
       [](A a) {
         return a.has("--pipeline-model-parallel-layout") &&
                (uneven_flags(a) || a.has("--account-for-embedding-in-pipeline-split") ||
                 a.has("--account-for-loss-in-pipeline-split"));
       },
       "pipeline_model_parallel_layout cannot be set with other pipeline layout arguments"},
      {"layout-embedding-first", kLayout,
       [](A a) {
         const std::string f = flat_layout(layout_stages(a));
         return layout_checked(a) && (f.empty() || f.front() != 'E' || count(f, 'E') != 1);
       },
       "the layout's first layer must be the embedding, exactly once"},
      {"layout-loss-last", kLayout,
       [](A a) {
         const std::string f = flat_layout(layout_stages(a));
         return layout_checked(a) && (f.empty() || f.back() != 'L' || count(f, 'L') != 1);
       },
       "the layout's last layer must be the loss, exactly once"},
      {"layout-decoder-count", kLayout,
       [](A a) { return layout_checked(a) && count(flat_layout(layout_stages(a)), 't') != a.layers(); },
       "the layout's transformer layers must number --num-layers"},
      {"layout-mtp-count", kLayout,
       [](A a) { return layout_checked(a) && count(flat_layout(layout_stages(a)), 'm') != mtp_layers(a); },
       "the layout's MTP layers must number --mtp-num-layers"},
      {"layout-mtp-placement", kLayout, [](A a) { return layout_checked(a) && layout_mtp_misplaced(a); },
       "MTP layers come after every decoder layer, all in the last virtual stage of one rank"},
      {"vpp-per-stage-excludes-uneven", kArgs,
       [](A a) {
         return a.has("--num-layers-per-virtual-pipeline-stage") && !a.has("--num-virtual-stages-per-pipeline-rank") &&
                !a.has("--pipeline-model-parallel-layout") && uneven_flags(a);
       },
       "use --num-virtual-stages-per-pipeline-rank with uneven pipeline parallelism"},
      {"vpp-per-stage-divides", kArgs, vpp_per_stage_does_not_divide,
       "layers must divide by the pipeline size, and layers per stage by --num-layers-per-virtual-pipeline-stage"},
      {"pp-divides-layers", kArgs,
       [](A a) { return !any_vpp_flag(a) && !uneven_flags(a) && accounted_layers(a) == 0 && a.layers() % a.pp() != 0; },
       "Number of layers should be divisible by the pipeline-model-parallel size"},
      {"accounted-split-divides", kConfig,
       [](A a) {
         return accounted_layers(a) > 0 && !a.has("--pipeline-model-parallel-layout") &&
                (a.layers() + accounted_layers(a)) % (a.pp() * a.vpp()) != 0;
       },
       "with the embedding / loss accounted in the pipeline split, num_layers plus them must divide by the "
       "pipeline and virtual pipeline sizes"},
      {"accounted-excludes-uneven", kConfig, [](A a) { return accounted_layers(a) > 0 && uneven_flags(a); },
       "account_for_embedding/loss_in_pipeline_split cannot be combined with num_layers_in_first/last_pipeline_stage"},
      {"interleaved-needs-pp", kArgs,
       [](A a) { return interleaved(a) && (overlap_p2p(a) ? a.pp() <= 1 : a.pp() <= 2); },
       "the interleaved schedule needs pp > 1 (pp > 2 without p2p overlap)"},
      {"uneven-first-positive", kConfig,
       [](A a) { return uneven_applies(a) && a.has("--decoder-first-pipeline-num-layers") &&
                        a.integer("--decoder-first-pipeline-num-layers", 0) <= 0; },
       "num_layers_in_first_pipeline_stage must be larger than 0"},
      {"uneven-last-positive", kConfig,
       [](A a) { return uneven_applies(a) && a.has("--decoder-last-pipeline-num-layers") &&
                        a.integer("--decoder-last-pipeline-num-layers", 0) <= 0; },
       "num_layers_in_last_pipeline_stage must be larger than 0"},
      {"uneven-first-divides-vpp", kConfig,
       [](A a) { return uneven_applies(a) && interleaved(a) && a.has("--decoder-first-pipeline-num-layers") &&
                        a.integer("--decoder-first-pipeline-num-layers", 0) % a.vpp() != 0; },
       "the first rank's layers (all its virtual stages) must be divisible by the virtual pipeline degree"},
      {"uneven-last-divides-vpp", kConfig,
       [](A a) { return uneven_applies(a) && interleaved(a) && a.has("--decoder-last-pipeline-num-layers") &&
                        a.integer("--decoder-last-pipeline-num-layers", 0) % a.vpp() != 0; },
       "the last rank's layers (all its virtual stages) must be divisible by the virtual pipeline degree"},
      {"uneven-middle-matches", kConfig,
       [](A a) { const MiddleRanks m = middle_ranks(a); return uneven_applies(a) && (m.layers != 0) != (m.ranks != 0); },
       "middle layers remain exactly when middle pipeline ranks do"},
      {"uneven-middle-divides", kConfig,
       [](A a) { const MiddleRanks m = middle_ranks(a); return uneven_applies(a) && m.ranks > 0 && m.layers % m.ranks != 0; },
       "the middle layers must be divisible by the middle pipeline ranks"},
      {"uneven-middle-divides-vpp", kConfig,
       [](A a) {
         const MiddleRanks m = middle_ranks(a);
         return uneven_applies(a) && interleaved(a) && m.ranks > 0 && m.layers % m.ranks == 0 &&
                (m.layers / m.ranks) % a.vpp() != 0;
       },
       "each middle rank's layers must be divisible by the virtual pipeline degree"},
      // Sharding flavours.
      {"overlap-param-gather-needs-sharding", kArgs,
       [](A a) { return a.has("--overlap-param-gather") && !a.distributed_optimizer() && !a.megatron_fsdp(); },
       "--overlap-param-gather only supported with distributed optimizer, megatron fsdp, or dist_muon"},
      {"overlap-param-gather-needs-grad-reduce", kArgs,
       [](A a) { return a.has("--overlap-param-gather") && !a.has("--overlap-grad-reduce"); },
       "Must use --overlap-param-gather with --overlap-grad-reduce"},
      {"fsdp2-no-pp", kArgs, [](A a) { return a.torch_fsdp2() && a.pp() != 1; },
       "--use-torch-fsdp2 is not supported with pipeline parallelism"},
      {"fsdp2-no-ep", kArgs, [](A a) { return a.torch_fsdp2() && a.ep() != 1; },
       "--use-torch-fsdp2 is not supported with expert parallelism"},
      {"fsdp2-no-distributed-optimizer", kArgs, [](A a) { return a.torch_fsdp2() && a.has("--use-distributed-optimizer"); },
       "--use-torch-fsdp2 is not supported with MCore's distributed optimizer"},
      {"fsdp2-no-grad-accumulation-fusion", kArgs, [](A a) { return a.torch_fsdp2() && grad_accumulation_fusion(a); },
       "--use-torch-fsdp2 needs --no-gradient-accumulation-fusion"},
      {"fsdp2-ckpt-format", kArgs,
       [](A a) { return a.torch_fsdp2() && ckpt_format(a) != "torch_dist" && ckpt_format(a) != "torch_dcp"; },
       "--use-torch-fsdp2 requires --ckpt-format torch_dist or torch_dcp"},
      {"fsdp2-untied", kArgs, [](A a) { return a.torch_fsdp2() && !a.has("--untie-embeddings-and-output-weights"); },
       "--use-torch-fsdp2 requires --untie-embeddings-and-output-weights"},
      {"fsdp2-no-fp16", kArgs, [](A a) { return a.torch_fsdp2() && a.has("--fp16"); },
       "--use-torch-fsdp2 not supported with fp16 yet"},
      {"fsdp-cuda-connections", kArgs,
       [](A a) { return (a.torch_fsdp2() || a.megatron_fsdp()) && a.env("CUDA_DEVICE_MAX_CONNECTIONS") == "1"; },
       "FSDP requires CUDA_DEVICE_MAX_CONNECTIONS > 1 or unset"},
      {"megatron-fsdp-ckpt-format", kArgs, [](A a) { return a.megatron_fsdp() && ckpt_format(a) != "fsdp_dtensor"; },
       "Megatron-FSDP requires --ckpt-format fsdp_dtensor"},
      {"fsdp-dtensor-needs-megatron-fsdp", kArgs, [](A a) { return ckpt_format(a) == "fsdp_dtensor" && !a.megatron_fsdp(); },
       "--ckpt-format fsdp_dtensor is only tested with Megatron FSDP"},
      {"megatron-fsdp-v2-no-distributed-optimizer", kArgs,
       [](A a) { return a.megatron_fsdp() && a.integer("--megatron-fsdp-version", 1) == 2 && a.has("--use-distributed-optimizer"); },
       "--megatron-fsdp-version 2 is not compatible with --use-distributed-optimizer"},
      {"torch-dcp-needs-fsdp2", kArgs,
       [](A a) { return ckpt_format(a) == "torch_dcp" && (!a.torch_fsdp2() || a.tp() > 1 || a.pp() > 1); },
       "--ckpt-format torch_dcp is only tested with FSDP2, without tensor or pipeline parallelism"},
      // Checkpoints (issue 15: plan --failures emits them).
      {"save-needs-positive-interval", kArgs,
       [](A a) {
         return (a.has("--save") && !a.has("--save-interval")) ||
                (a.has("--save-interval") && a.integer("--save-interval", 0) <= 0);
       },
       "--save needs --save-interval, and --save-interval must be a positive number of iterations"},
      {"async-save-ckpt-format", kSaveCheckpoint,
       [](A a) {
         const std::string f = ckpt_format(a);
         return a.has("--async-save") && f != "torch_dist" && f != "torch_dcp" && f != "fsdp_dtensor";
       },
       "--async-save is implemented only for --ckpt-format torch_dist, torch_dcp or fsdp_dtensor"},
      // validate_args disables --async-save (a warning, not an error) without the persistent worker:
      // an export that asks for it must not be silently synchronous.
      {"async-save-needs-persistent-worker", kArgs,
       [](A a) { return a.has("--async-save") && !a.has("--use-persistent-ckpt-worker"); },
       "--async-save is switched off without --use-persistent-ckpt-worker"},
      {"fp8-param-gather-needs-sharding", kArgs,
       [](A a) { return a.has("--fp8-param-gather") && !a.distributed_optimizer() && !a.torch_fsdp2() && !a.megatron_fsdp(); },
       "--fp8-param-gather only supported with distributed optimizer, torch fsdp2, megatron fsdp"},
      // Model parallelism.
      {"tp-cp-cuda-connections", kArgs, cuda_connections_not_one,
       "tensor or context parallelism requires CUDA_DEVICE_MAX_CONNECTIONS=1 (before Blackwell)"},
      {"tp-comm-overlap-needs-sp", kArgs, [](A a) { return a.has("--tp-comm-overlap") && !sequence_parallel(a); },
       "Tensor parallel communication/GEMM overlap can happen only when sequence parallelism is enabled"},
      {"cp-divides-seq", kArgs,
       [](A a) { return a.cp() > 1 && a.integer("--seq-length", 0) % (2 * a.cp()) != 0; },
       "seq-length should be a multiple of 2 * context-parallel-size"},
      {"heads-divide-tp", kConfig, [](A a) { return a.integer("--num-attention-heads", 0) % a.tp() != 0; },
       "num_attention_heads must be a multiple of tensor_model_parallel_size"},
      {"query-groups-tp", kConfig,
       [](A a) {
         if (!a.has("--group-query-attention")) return false;
         const std::int64_t g = a.integer("--num-query-groups", 1);
         return g % a.tp() != 0 && a.tp() % g != 0;
       },
       "num_query_groups must be a multiple or divisor of tensor_model_parallel_size"},
      {"padded-vocab-divides-tp", kVocab,
       [](A a) { return a.has("--padded-vocab-size") && a.integer("--padded-vocab-size", 0) % a.tp() != 0; },
       "the padded vocabulary must be divisible by the tensor-parallel size"},
      // Model definition.
      {"seq-within-max-position", kArgs,
       [](A a) { return a.integer("--max-position-embeddings", 0) < a.integer("--seq-length", 0); },
       "max_position_embeddings must be greater than or equal to seq_length"},
      {"kv-channels-default", kArgs,
       [](A a) { return !a.has("--kv-channels") && a.integer("--hidden-size", 0) % std::max<std::int64_t>(1, a.integer("--num-attention-heads", 1)) != 0; },
       "without --kv-channels the hidden size must be divisible by the heads"},
      {"mla-not-gqa", kArgs, [](A a) { return a.has("--multi-latent-attention") && a.has("--group-query-attention"); },
       "Group query attention is mutually exclusive with multi latent attention"},
      {"rope-type-needs-mla", kArgUtils,
       [](A a) { return a.has("--rope-type") && a.text("--rope-type", "") != "rope" && !a.has("--multi-latent-attention"); },
       "Common attention only support rope_type=\"rope\""},
      {"mtp-position-embedding", kArgs,
       [](A a) { return mtp_layers(a) > 0 && position_type(a) != "rope" && position_type(a) != "none"; },
       "Multi-Token Prediction is supported with rope and none position embeddings"},
      {"one-activation", kArgUtils,
       [](A a) { return a.has("--swiglu") + a.has("--squared-relu") + a.has("--quick-geglu") > 1; },
       "--swiglu, --squared-relu and --quick-geglu are exclusive"},
      {"clamp-swiglu-needs-moe", kConfig,
       [](A a) { return a.has("--activation-func-clamp-value") && a.has("--swiglu") && a.experts() == 0; },
       "activation_func_clamp_value for SwiGLU is only supported with MoE"},
      {"clamp-swiglu-no-offset", kConfig,
       [](A a) { return a.has("--activation-func-clamp-value") && a.has("--swiglu") && a.number("--glu-linear-offset", 0) != 0; },
       "glu_linear_offset must be zero when activation_func_clamp_value is set for SwiGLU"},
      {"clamp-positive", kConfig,
       [](A a) { return a.has("--activation-func-clamp-value") && !(a.number("--activation-func-clamp-value", 0) > 0); },
       "activation_func_clamp_value must be finite and greater than zero"},
      {"glu-offset-needs-quick-gelu", kConfig,
       [](A a) { return a.number("--glu-linear-offset", 0) != 0 && !a.has("--quick-geglu"); },
       "glu_linear_offset != 0 is only supported with quick_gelu (with bias-activation fusion)"},
      {"bf16-fp16-exclusive", kArgs, [](A a) { return a.has("--bf16") && a.has("--fp16"); }, "--bf16 and --fp16 are exclusive"},
      {"fp8-param-needs-fp8", kConfig, [](A a) { return a.has("--fp8-param-gather") && !a.has("--fp8-format"); },
       "fp8_param must be used together with fp8 mode"},
      // MoE.
      {"ep-needs-experts", kArgs,
       [](A a) { return a.ep() > 1 && (a.experts() == 0 || a.experts() % a.ep() != 0); },
       "expert parallelism needs --num-experts, a multiple of --expert-model-parallel-size"},
      {"moe-bias-needs-etp1", kConfig, [](A a) { return a.experts() > 0 && bias_linear(a) && a.etp() != 1; },
       "Bias in MoE is only supported when ETP==1"},
      {"moe-layer-freq-length", kLayerSpecs, moe_layer_freq_length_wrong,
       "an explicit --moe-layer-freq list has one entry per layer"},
      {"expert-bias-score-function", kConfig,
       [](A a) { return a.has("--moe-router-enable-expert-bias") && score_function(a) != "sigmoid" && score_function(a) != "sqrtsoftplus"; },
       "Expert bias for aux-loss-free routing only supports sigmoid and sqrtsoftplus score functions"},
      {"topk1-pre-softmax", kConfig,
       [](A a) {
         return a.experts() > 0 && a.integer("--moe-router-topk", 2) == 1 && score_function(a) == "softmax" &&
                !a.has("--moe-router-pre-softmax") && a.text("--moe-router-load-balancing-type", "aux_loss") != "sinkhorn";
       },
       "Please use --moe-router-pre-softmax when topk is 1"},
      {"group-topk-needs-groups", kConfig,
       [](A a) { return a.has("--moe-router-group-topk") && !a.has("--moe-router-num-groups"); },
       "When using group limited routing, moe_router_num_groups must be specified"},
      {"groups-divide-experts", kConfig,
       [](A a) { return a.has("--moe-router-group-topk") && a.has("--moe-router-num-groups") &&
                        a.experts() % std::max<std::int64_t>(1, a.integer("--moe-router-num-groups", 1)) != 0; },
       "num_moe_experts should be divisible by moe_router_num_groups"},
      {"group-topk-within-groups", kConfig,
       [](A a) {
         return a.has("--moe-router-group-topk") && a.has("--moe-router-num-groups") &&
                a.integer("--moe-router-group-topk", 0) > a.integer("--moe-router-num-groups", 0);
       },
       "moe_router_group_topk should be at most moe_router_num_groups"},
      {"deepep-no-pad-to-capacity", kConfig,
       [](A a) { return dispatcher(a) == "flex" && flex_backend(a) == "deepep" && a.has("--moe-pad-expert-input-to-capacity"); },
       "Flex token dispatcher with deepep backend does not support moe_pad_expert_input_to_capacity"},
      {"pad-needs-capacity", kConfig,
       [](A a) { return a.has("--moe-pad-expert-input-to-capacity") && !a.has("--moe-expert-capacity-factor"); },
       "moe_expert_capacity_factor must be set to use moe_pad_expert_input_to_capacity"},
      {"capacity-load-balancing", kConfig, capacity_with_wrong_balancing,
       "moe_expert_capacity_factor only works with aux_loss, seq_aux_loss, global_aux_loss or none load balancing"},
      {"aux-loss-coeff-per-type", kConfig, aux_loss_lists_differ,
       "moe_aux_loss_coeff must be a list of the same length as moe_router_load_balancing_type"},
      {"shared-expert-overlap-dispatcher", kConfig,
       [](A a) { return a.has("--moe-shared-expert-overlap") && dispatcher(a) != "alltoall" && dispatcher(a) != "flex"; },
       "moe_shared_expert_overlap only works with alltoall or flex token dispatcher"},
      {"overlap-ep-needs-ep", kConfig, [](A a) { return a.has("--overlap-moe-expert-parallel-comm") && a.ep() <= 1; },
       "overlap_moe_expert_parallel_comm is only supported with expert model parallelism"},
      {"overlap-ep-dispatcher", kConfig,
       [](A a) { return a.has("--overlap-moe-expert-parallel-comm") && dispatcher(a) != "alltoall" && dispatcher(a) != "flex"; },
       "overlap_moe_expert_parallel_comm is supported with alltoall/flex token dispatcher"},
      {"overlap-ep-pp-needs-vpp", kConfig,
       [](A a) { return a.has("--overlap-moe-expert-parallel-comm") && a.pp() > 1 && !interleaved(a); },
       "with EP A2A overlap and pipeline parallelism, virtual_pipeline_model_parallel_size must be specified"},
      {"overlap-ep-no-full-recompute", kConfig,
       [](A a) {
         return a.has("--overlap-moe-expert-parallel-comm") &&
                (granularity(a) == "full" || a.has("--recompute-method") || a.has("--recompute-num-layers") || has_module(a, "moe"));
       },
       "disable full recomputation, recompute method/num layers and moe recompute with overlap_moe_expert_parallel_comm"},
      {"overlap-ep-needs-bf16", kConfig,
       [](A a) { return a.has("--overlap-moe-expert-parallel-comm") && !a.has("--bf16") && !a.has("--fp16"); },
       "overlap_moe_expert_parallel_comm is only supported with bf16 or fp16 model"},
      {"overlap-ep-no-shared-overlap", kConfig,
       [](A a) { return a.has("--overlap-moe-expert-parallel-comm") && a.has("--moe-shared-expert-overlap"); },
       "disable moe_shared_expert_overlap when enabling overlap_moe_expert_parallel_comm"},
      {"overlap-ep-mtp-at-most-one", kConfig,
       [](A a) { return a.has("--overlap-moe-expert-parallel-comm") && mtp_layers(a) > 1; },
       "MTP supports at most one layer when enabling overlap_moe_expert_parallel_comm"},
      {"delay-wgrad-needs-overlap-ep", kConfig,
       [](A a) { return a.has("--delay-wgrad-compute") && !a.has("--overlap-moe-expert-parallel-comm"); },
       "overlap_moe_expert_parallel_comm must be enabled when enabling delay_wgrad_compute"},
      // Recompute.
      {"recompute-granularity-values", kConfig,
       [](A a) { return a.has("--recompute-granularity") && granularity(a) != "full" && granularity(a) != "selective"; },
       "recompute_granularity must be full or selective"},
      {"selective-no-method", kArgs, [](A a) { return granularity(a) == "selective" && a.has("--recompute-method"); },
       "recompute method is not yet supported for selective recomputing granularity"},
      {"full-needs-method", kConfig,
       [](A a) { return granularity(a) == "full" && a.text("--recompute-method", "") != "block" && a.text("--recompute-method", "") != "uniform"; },
       "full recompute needs --recompute-method block or uniform"},
      {"full-needs-num-layers", kConfig, [](A a) { return granularity(a) == "full" && !a.has("--recompute-num-layers"); },
       "full recompute needs --recompute-num-layers"},
      {"selective-no-num-layers", kConfig, [](A a) { return granularity(a) == "selective" && a.has("--recompute-num-layers"); },
       "recompute_num_layers must be None with selective recompute"},
      {"recompute-modules-allowed", kConfig,
       [](A a) {
         const auto m = a.recompute_modules();
         return std::any_of(m.begin(), m.end(), [](const std::string& x) { return !allowed_recompute_modules().count(x); });
       },
       "recompute_modules must be among core_attn, moe_act, layernorm, mla_up_proj, mlp, moe, shared_experts, ..."},
      {"moe-act-needs-grouped-gemm", kConfig, [](A a) { return has_module(a, "moe_act") && !a.has("--moe-grouped-gemm"); },
       "moe_act in recompute_modules is only supported with moe_grouped_gemm"},
      {"mla-up-proj-needs-mla", kConfig, [](A a) { return has_module(a, "mla_up_proj") && !a.has("--multi-latent-attention"); },
       "mla_up_proj in recompute_modules is only supported with multi_latent_attention"},
      {"shared-experts-recompute-no-overlap", kConfig,
       [](A a) { return has_module(a, "shared_experts") && a.has("--moe-shared-expert-intermediate-size") && a.has("--moe-shared-expert-overlap"); },
       "shared_experts recompute cannot work with --moe-shared-expert-overlap"},
      {"fp8-delayed-recompute", kConfig,
       [](A a) {
         return a.has("--fp8-format") && a.text("--fp8-recipe", "delayed") == "delayed" &&
                (has_module(a, "moe_act") || has_module(a, "layernorm"));
       },
       "Delayed scaling does not support moe_act and layernorm recompute for fp8"},
  });
  return rules;
}

std::vector<RuleViolation> check_megatron_args(const std::vector<std::string>& args,
                                               const std::map<std::string, std::string>& env) {
  const MegatronArgs parsed(args, env);
  std::vector<RuleViolation> out;
  for (const auto& rule : megatron_rules())
    if (rule.violated(parsed)) out.push_back({rule.id, rule.source, rule.message});
  return out;
}

}  // namespace tessera
