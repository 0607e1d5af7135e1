#include "export/deepspeed_rules.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>

namespace tessera {
namespace {

using json = nlohmann::json;

// ---- the pydantic models' fields (extra="forbid": runtime/config_utils.py DeepSpeedConfigModel) --

// runtime/zero/config.py DeepSpeedZeroConfig: field names and their stage3_* aliases
// (populate_by_name=True accepts both).
const std::set<std::string>& zero_keys() {
  static const std::set<std::string> keys = {
      "stage", "contiguous_gradients", "reduce_scatter", "reduce_bucket_size", "use_multi_rank_bucket_allreduce",
      "allgather_partitions", "allgather_bucket_size", "overlap_comm", "load_from_fp32_weights", "elastic_checkpoint",
      "offload_param", "offload_optimizer", "zenflow", "sub_group_size", "cpu_offload_param",
      "cpu_offload_use_pin_memory", "cpu_offload", "prefetch_bucket_size", "stage3_prefetch_bucket_size",
      "param_persistence_threshold", "stage3_param_persistence_threshold", "model_persistence_threshold",
      "stage3_model_persistence_threshold", "max_live_parameters", "stage3_max_live_parameters", "max_reuse_distance",
      "stage3_max_reuse_distance", "gather_16bit_weights_on_model_save", "stage3_gather_16bit_weights_on_model_save",
      "module_granularity_threshold", "stage3_module_granularity_threshold", "use_all_reduce_for_fetch_params",
      "stage3_use_all_reduce_for_fetch_params", "allgather_sequential", "stage3_allgather_sequential",
      "stage3_gather_fp16_weights_on_model_save", "ignore_unused_parameters", "legacy_stage1", "round_robin_gradients",
      "zero_hpz_partition_size", "zero_quantized_weights", "zero_quantized_nontrainable_weights",
      "zero_quantized_gradients", "zeropp_loco_param", "mics_shard_size", "mics_hierarchical_params_gather",
      "memory_efficient_linear", "pipeline_loading_checkpoint", "override_module_apply", "log_trace_cache_warnings",
      "enable_sanity_checks", "save_muon_momentum_buffer_in_memory", "leaf_module"};
  return keys;
}
// Fields of DeepSpeedZeroConfig declared Field(ge=0).
constexpr std::array<const char*, 14> kZeroNonNegative = {
    "reduce_bucket_size", "allgather_bucket_size", "sub_group_size", "prefetch_bucket_size",
    "stage3_prefetch_bucket_size", "param_persistence_threshold", "stage3_param_persistence_threshold",
    "model_persistence_threshold", "stage3_model_persistence_threshold", "max_live_parameters",
    "stage3_max_live_parameters", "max_reuse_distance", "stage3_max_reuse_distance", "zero_hpz_partition_size"};

// runtime/zero/offload_config.py DeepSpeedZeroOffloadParamConfig.
const std::set<std::string>& offload_param_keys() {
  static const std::set<std::string> keys = {"device", "nvme_path", "buffer_count", "buffer_size", "max_in_cpu", "pin_memory"};
  return keys;
}
// runtime/zero/offload_config.py DeepSpeedZeroOffloadOptimizerConfig.
const std::set<std::string>& offload_optimizer_keys() {
  static const std::set<std::string> keys = {"device",        "nvme_path",  "buffer_count", "pin_memory",
                                             "pipeline_read", "pipeline_write", "fast_init", "ratio",
                                             "super_offload", "cpuadam_cores_perc"};
  return keys;
}
// runtime/precision_config.py DeepSpeedBF16Config.
const std::set<std::string>& bf16_keys() {
  static const std::set<std::string> keys = {"enabled", "immediate_grad_update", "check_grad_overflow",
                                             "bf16_master_weights_and_grads", "bf16_optimizer_states"};
  return keys;
}

// runtime/config.py DEEPSPEED_OPTIMIZERS (the names a config's optimizer.type may take, compared
// lower-cased by DeepSpeedConfig._initialize_params).
const std::set<std::string>& deepspeed_optimizers() {
  static const std::set<std::string> names = {"adagrad", "adam",   "adamw", "lamb",  "onebitadam", "onebitlamb",
                                              "zerooneadam", "muadam", "muadamw", "musgd", "lion", "muon"};
  return names;
}

// ---- reading a config back -------------------------------------------------------------------

// One section's reader: its object (or null), the path it is named by in messages, the view.
struct Section {
  const json* object = nullptr;
  std::string path;
  DeepSpeedConfigView* view = nullptr;

  const json* at(const char* key) const {
    if (object == nullptr) return nullptr;
    const auto it = object->find(key);
    return it == object->end() || it->is_null() ? nullptr : &*it;
  }
  std::string name(const std::string& key) const { return path.empty() ? key : path + "." + key; }
  void wrong_type(const char* key) const { view->type_errors.push_back(name(key)); }
  std::optional<std::int64_t> integer(const char* key) const {
    const json* v = at(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number_integer()) return wrong_type(key), std::nullopt;
    return v->get<std::int64_t>();
  }
  std::optional<double> number(const char* key) const {
    const json* v = at(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number()) return wrong_type(key), std::nullopt;
    return v->get<double>();
  }
  bool flag(const char* key, bool fallback) const {
    const json* v = at(key);
    if (v == nullptr) return fallback;
    if (!v->is_boolean()) return wrong_type(key), fallback;
    return v->get<bool>();
  }
  std::string text(const char* key, const std::string& fallback) const {
    const json* v = at(key);
    if (v == nullptr) return fallback;
    if (!v->is_string()) return wrong_type(key), fallback;
    return v->get<std::string>();
  }
  void check_keys(const std::set<std::string>& allowed) const {
    if (object == nullptr) return;
    for (const auto& [key, value] : object->items())
      if (!allowed.count(key)) view->unknown_keys.push_back(name(key));
  }
  void check_at_least(const char* key, double bound) const {
    if (const auto v = number(key); v && *v < bound) view->out_of_range.push_back(name(key));
  }
  void check_fraction(const char* key) const {
    if (const auto v = number(key); v && (*v < 0 || *v > 1)) view->out_of_range.push_back(name(key));
  }
};

// The section at `key` of `parent`: an object, or nothing (absent / null); another type is a type error.
Section section(const Section& parent, const char* key) {
  Section s{nullptr, parent.name(key), parent.view};
  const json* v = parent.at(key);
  if (v == nullptr) return s;
  if (!v->is_object()) return parent.wrong_type(key), s;
  s.object = v;
  return s;
}

DeepSpeedOffloadView read_offload(const Section& s, const std::set<std::string>& keys) {
  DeepSpeedOffloadView o;
  if (s.object == nullptr) return o;
  o.present = true;
  s.check_keys(keys);
  o.device = s.text("device", "none");
  o.nvme_path = s.at("nvme_path") != nullptr;
  o.ratio = s.number("ratio").value_or(1.0);
  for (const char* size : {"buffer_count", "buffer_size", "max_in_cpu"}) s.check_at_least(size, 0);
  return o;
}

void read_zero(const Section& root, DeepSpeedConfigView& v) {
  const Section z = section(root, "zero_optimization");
  z.check_keys(zero_keys());
  v.stage = z.integer("stage").value_or(0);
  for (const char* size : kZeroNonNegative) z.check_at_least(size, 0);
  const Section opt = section(z, "offload_optimizer");
  v.offload_optimizer = read_offload(opt, offload_optimizer_keys());
  opt.check_fraction("ratio");
  opt.check_fraction("cpuadam_cores_perc");
  v.offload_param = read_offload(section(z, "offload_param"), offload_param_keys());
}

void read_precision(const Section& root, DeepSpeedConfigView& v) {
  // runtime/precision_config.py get_bfloat16_config: "bf16", or the older "bfloat16".
  Section bf16 = section(root, "bf16");
  if (bf16.object == nullptr) bf16 = section(root, "bfloat16");
  bf16.check_keys(bf16_keys());
  v.bf16 = bf16.flag("enabled", false);
  v.fp16 = section(root, "fp16").flag("enabled", false);
}

void read_activation_checkpointing(const Section& root, DeepSpeedConfigView& v) {
  const Section a = section(root, "activation_checkpointing");
  v.partition_activations = a.flag("partition_activations", false);
  v.cpu_checkpointing = a.flag("cpu_checkpointing", false);
  v.contiguous_memory = a.flag("contiguous_memory_optimization", false);
  v.number_checkpoints = a.at("number_checkpoints") != nullptr;
}

void read_optimizer(const Section& root, DeepSpeedConfigView& v) {
  const Section o = section(root, "optimizer");
  v.has_optimizer = o.object != nullptr;
  std::string type = o.text("type", "");
  std::transform(type.begin(), type.end(), type.begin(), [](unsigned char c) { return std::tolower(c); });
  v.optimizer_type = type;
  const Section params = section(o, "params");
  v.optimizer_max_grad_norm = params.at("max_grad_norm") != nullptr;
}

// ---- the rules -----------------------------------------------------------------------------

bool offloads(const DeepSpeedOffloadView& o) { return o.present && o.device != "none"; }
bool valid_device(const DeepSpeedOffloadView& o) { return o.device == "none" || o.device == "cpu" || o.device == "nvme"; }

using V = const DeepSpeedConfigView&;
using T = const DeepSpeedTopology&;

constexpr std::array<DeepSpeedRule, 22> kDeepSpeedRules{{
    // Batch arithmetic (runtime/config.py).
    {"ds-batch-given", "deepspeed/runtime/config.py :: DeepSpeedConfig._set_batch_related_parameters",
     [](V v, T) { return !v.train_batch && !v.micro_batch; },
     "either train_batch_size or train_micro_batch_size_per_gpu must be given"},
    {"ds-batch-positive", "deepspeed/runtime/config.py :: DeepSpeedConfig._batch_assertion",
     [](V v, T) {
       return v.train_batch.value_or(1) <= 0 || v.micro_batch.value_or(1) <= 0 || v.grad_accum.value_or(1) <= 0;
     },
     "train_batch_size, train_micro_batch_size_per_gpu and gradient_accumulation_steps must be > 0"},
    {"ds-batch-product", "deepspeed/runtime/config.py :: DeepSpeedConfig._batch_assertion",
     [](V v, T t) {
       if (!v.train_batch || !v.micro_batch || !v.grad_accum) return false;  // DeepSpeed derives the missing one
       return *v.train_batch != *v.micro_batch * *v.grad_accum * t.dp;
     },
     "train_batch_size must equal train_micro_batch_size_per_gpu x gradient_accumulation_steps x data-parallel size"},
    // Precision.
    {"ds-bf16-fp16-exclusive", "deepspeed/runtime/config.py :: DeepSpeedConfig._initialize_params",
     [](V v, T) { return v.bf16 && v.fp16; }, "bfloat16 and fp16 modes cannot be enabled together"},
    {"ds-bf16-device", "deepspeed/runtime/engine.py :: DeepSpeedEngine._do_sanity_check",
     [](V v, T t) { return v.bf16 && !t.bf16_supported; }, "bf16 is not supported on this device (Volta): use fp16"},
    // ZeRO.
    {"ds-zero-stage", "deepspeed/runtime/zero/config.py :: ZeroStageEnum; runtime/config.py :: _do_error_check",
     [](V v, T) { return v.stage < 0 || v.stage > 3; }, "zero_optimization.stage must be 0, 1, 2 or 3"},
    {"ds-pipeline-zero", "deepspeed/runtime/pipe/engine.py :: PipelineEngine.__init__",
     [](V v, T t) { return t.pp > 1 && v.stage >= 2; }, "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism"},
    {"ds-zero-needs-optimizer", "deepspeed/runtime/engine.py :: DeepSpeedEngine._configure_zero_optimizer",
     [](V v, T) { return (v.stage == 1 || v.stage == 2) && !v.has_optimizer; },
     "ZeRO stages 1 and 2 require an optimizer (none in the config; Tessera's scripts pass none)"},
    // Offload (ZeRO-Offload, ZeRO-Infinity).
    {"ds-offload-device", "deepspeed/runtime/zero/offload_config.py :: OffloadDeviceEnum",
     [](V v, T) { return !valid_device(v.offload_optimizer) || !valid_device(v.offload_param); },
     "offload device must be none, cpu or nvme"},
    {"ds-offload-optimizer-needs-zero",
     "deepspeed/runtime/engine.py :: _configure_basic_optimizer (DeepSpeedCPUAdam); ops/adam/cpu_adam.py :: step",
     [](V v, T) { return offloads(v.offload_optimizer) && v.stage == 0; },
     "optimizer offload needs ZeRO stage >= 1: at stage 0 nothing moves the parameters to the CPU Adam"},
    {"ds-offload-param-stage3", "deepspeed/runtime/zero/config.py :: offload_param; engine.py :: _configure_zero_optimizer",
     [](V v, T) { return offloads(v.offload_param) && v.stage != 3; },
     "offload_param is valid only with ZeRO stage 3 (stages 0-2 ignore it and keep the parameters on the GPU)"},
    {"ds-nvme-optimizer-stage3", "deepspeed/runtime/zero/stage_1_and_2.py :: DeepSpeedZeroOptimizer.__init__",
     [](V v, T) { return v.offload_optimizer.device == "nvme" && v.stage != 3; },
     "optimizer state swaps to NVMe only under ZeRO-3 (stages 1-2 treat device nvme as cpu)"},
    {"ds-nvme-optimizer-path", "deepspeed/runtime/zero/stage3.py :: DeepSpeedZeroOptimizer_Stage3._configure_tensor_swapping",
     [](V v, T) { return v.offload_optimizer.device == "nvme" && !v.offload_optimizer.nvme_path; },
     "offload_optimizer device nvme needs nvme_path"},
    {"ds-nvme-param-path",
     "deepspeed/runtime/zero/partition_parameters.py :: Init.__init__; swap_tensor/partitioned_param_swapper.py :: _configure_aio",
     [](V v, T) { return v.offload_param.device == "nvme" && !v.offload_param.nvme_path; },
     "offload_param device nvme needs nvme_path"},
    {"ds-partial-offload-stage3", "deepspeed/runtime/zero/config.py :: DeepSpeedZeroConfig.offload_ratio_check",
     [](V v, T) { return v.offload_optimizer.present && v.offload_optimizer.ratio < 1.0 && v.stage != 3; },
     "partial optimizer offloading (ratio < 1) is only supported with ZeRO stage 3"},
    // Activation checkpointing.
    {"ds-contiguous-needs-partition", "deepspeed/runtime/activation_checkpointing/checkpointing.py :: configure",
     [](V v, T) { return v.contiguous_memory && !v.partition_activations; },
     "contiguous memory checkpointing needs partition_activations"},
    {"ds-contiguous-needs-count", "deepspeed/runtime/activation_checkpointing/checkpointing.py :: configure",
     [](V v, T) { return v.contiguous_memory && !v.number_checkpoints; },
     "contiguous memory checkpointing needs number_checkpoints"},
    // Optimizer.
    {"ds-optimizer-supported", "deepspeed/runtime/engine.py :: _do_sanity_check; runtime/config.py :: DEEPSPEED_OPTIMIZERS",
     [](V v, T) { return v.has_optimizer && !deepspeed_optimizers().count(v.optimizer_type); },
     "optimizer.type is not a DeepSpeed optimizer"},
    {"ds-no-max-grad-norm", "deepspeed/runtime/engine.py :: DeepSpeedEngine._configure_basic_optimizer",
     [](V v, T) { return v.optimizer_max_grad_norm; },
     "max_grad_norm is not an optimizer parameter: use gradient_clipping"},
    // What the pydantic models refuse.
    {"ds-known-keys", "deepspeed/runtime/config_utils.py :: DeepSpeedConfigModel.model_config (extra=\"forbid\")",
     [](V v, T) { return !v.unknown_keys.empty(); },
     "zero_optimization, offload_optimizer, offload_param and bf16 accept only their own fields"},
    {"ds-field-types", "deepspeed/runtime/config_utils.py :: DeepSpeedConfigModel (pydantic field types)",
     [](V v, T) { return !v.type_errors.empty(); }, "a field has the wrong type"},
    {"ds-field-bounds", "deepspeed/runtime/zero/config.py, zero/offload_config.py :: Field(ge=0), ratio in [0, 1]",
     [](V v, T) { return !v.out_of_range.empty(); }, "bucket sizes, thresholds and buffer counts must be >= 0; ratios in [0, 1]"},
}};

}  // namespace

DeepSpeedConfigView parse_deepspeed_config(const json& config) {
  DeepSpeedConfigView v;
  const Section root{config.is_object() ? &config : nullptr, "", &v};
  if (!config.is_object()) v.type_errors.push_back("(config is not an object)");
  v.train_batch = root.integer("train_batch_size");
  v.micro_batch = root.integer("train_micro_batch_size_per_gpu");
  v.grad_accum = root.integer("gradient_accumulation_steps");
  read_precision(root, v);
  read_zero(root, v);
  read_activation_checkpointing(root, v);
  read_optimizer(root, v);
  return v;
}

std::span<const DeepSpeedRule> deepspeed_rules() { return kDeepSpeedRules; }

std::vector<const DeepSpeedRule*> deepspeed_violations(const json& config, const DeepSpeedTopology& topology) {
  const DeepSpeedConfigView view = parse_deepspeed_config(config);
  std::vector<const DeepSpeedRule*> broken;
  for (const DeepSpeedRule& rule : kDeepSpeedRules)
    if (rule.violated(view, topology)) broken.push_back(&rule);
  return broken;
}

}  // namespace tessera
