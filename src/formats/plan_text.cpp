#include "formats/plan_text.h"

#include <filesystem>
#include <map>

#include <fmt/core.h>

#include "core/checks.h"
#include "core/error.h"
#include "formats/integer_text.h"
#include "formats/json_fields.h"

namespace tessera {

namespace {

constexpr const char* kKeys =
    "tp, pp, dp, cp, ep, vpp, mb, gbs, seq, recompute, recompute_layers, sp, zero, precision, overlap_grad, "
    "overlap_param, overlap_tp, overlap_p2p, p2p_sg, flash, first_stage_layers, last_stage_layers, etp, "
    "dispatcher, capacity_factor, force_balance, overlap_ep, delay_wgrad, fp8_recipe, fp8_param_gather, "
    "recompute_modules, reshard, framework, account_embedding, account_loss, offload_optimizer, offload_params, "
    "offload_activations, task, lora_rank, lora_targets";


// Fills a plan from key -> text pairs (shorthand or JSON values rendered as text).
PlanRequest build(const std::map<std::string, std::string>& kv, const ModelSpec& model,
                  const Cluster& cluster) {
  PlanRequest r;
  Plan& p = r.plan;
  bool dp_given = false, sp_given = false, gbs_given = false;
  for (const auto& [key, value] : kv) {
    if (key == "tp") p.tp = parse_integer(value, key);
    else if (key == "pp") p.pp = parse_integer(value, key);
    else if (key == "dp") { p.dp = parse_integer(value, key); dp_given = true; }
    else if (key == "cp") p.cp = parse_integer(value, key);
    else if (key == "ep") p.ep = parse_integer(value, key);
    else if (key == "vpp") p.vpp = parse_integer(value, key);
    else if (key == "mb") p.micro_batch = parse_integer(value, key);
    else if (key == "gbs") { r.workload.global_batch = parse_integer(value, key); gbs_given = true; }
    else if (key == "seq") r.workload.seq_len = parse_integer(value, key);
    else if (key == "recompute") p.recompute = parse_recompute(value);
    else if (key == "recompute_layers") p.recompute_layers = parse_integer(value, key);
    else if (key == "sp") { p.sequence_parallel = parse_switch(key, value); sp_given = true; }
    else if (key == "zero") p.zero = parse_optimizer_sharding(value);
    else if (key == "precision") p.precision = parse_precision(value);
    else if (key == "overlap_grad") p.overlap_grad_reduce = parse_switch(key, value);
    else if (key == "overlap_param") p.overlap_param_gather = parse_switch(key, value);
    else if (key == "overlap_tp") p.overlap_tp_comm = parse_switch(key, value);
    else if (key == "overlap_p2p") p.overlap_p2p = parse_switch(key, value);
    else if (key == "flash") p.flash_attention = parse_switch(key, value);
    else if (key == "p2p_sg") p.p2p_scatter_gather = parse_switch(key, value);
    else if (key == "first_stage_layers") p.first_stage_layers = parse_integer(value, key);
    else if (key == "last_stage_layers") p.last_stage_layers = parse_integer(value, key);
    else if (key == "etp") p.etp = parse_integer(value, key);
    else if (key == "dispatcher") p.dispatcher = parse_moe_dispatcher(value);
    else if (key == "capacity_factor") p.capacity_factor = parse_number(value, key);
    else if (key == "force_balance") p.force_balance = parse_switch(key, value);
    else if (key == "overlap_ep") p.overlap_ep = parse_switch(key, value);
    else if (key == "delay_wgrad") p.delay_wgrad = parse_switch(key, value);
    else if (key == "fp8_recipe") p.fp8_recipe = parse_fp8_recipe(value);
    else if (key == "fp8_param_gather") p.fp8_param_gather = parse_switch(key, value);
    else if (key == "recompute_modules") p.recompute_modules = parse_recompute_modules(value);
    else if (key == "reshard") p.reshard_after_forward = parse_switch(key, value);
    else if (key == "account_embedding") p.account_embedding = parse_switch(key, value);
    else if (key == "account_loss") p.account_loss = parse_switch(key, value);
    else if (key == "framework") p.framework = parse_training_framework(value);
    else if (key == "offload_optimizer") p.offload.optimizer = parse_memory_tier(key, value);
    else if (key == "offload_params") p.offload.params = parse_memory_tier(key, value);
    else if (key == "offload_activations") p.offload.activations = parse_memory_tier(key, value);
    else if (key == "task") p.tuning.task = parse_training_task(value);
    else if (key == "lora_rank") p.tuning.lora_rank = parse_integer(value, key);
    else if (key == "lora_targets") p.tuning.lora_targets = parse_lora_targets(value);
    else throw Error("plan." + key, "unknown key", kKeys);
  }
  if (!gbs_given) throw Error("gbs", "missing from the plan", "gbs=N (sequences per optimizer step)");
  if (r.workload.seq_len == 0 && kv.count("seq") == 0) r.workload.seq_len = model.max_context;
  if (!sp_given) p.sequence_parallel = p.tp > 1;
  // Degrees must be positive before deriving dp from them.
  for (const auto& [name, v] : {std::pair{"tp", p.tp}, {"pp", p.pp}, {"cp", p.cp}})
    if (v < 1) throw Error(name, "got " + std::to_string(v), "an integer from 1");
  if (!dp_given) {
    const std::int64_t inner = saturating_product({p.tp, p.pp, p.cp});
    if (cluster.gpus() % inner != 0) {
      // Name the first degree that breaks divisibility.
      const char* field = cluster.gpus() % p.tp != 0 ? "tp"
                          : cluster.gpus() % saturating_product({p.tp, p.pp}) != 0 ? "pp" : "cp";
      throw Error(field, "tp*pp*cp = " + std::to_string(inner) + " does not divide the " +
                             std::to_string(cluster.gpus()) + " GPUs",
                  "tp, pp, cp whose product divides " + std::to_string(cluster.gpus()));
    }
    p.dp = cluster.gpus() / inner;
  }
  validate_plan(p, model, cluster, r.workload);
  return r;
}

std::string json_value_text(const std::string& key, const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  // A boolean stays a word: switches accept it, integer keys refuse it ("vpp": true is not 1).
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());  // range-checked by to_int
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number_float() && key == "capacity_factor") return fmt::format("{}", v.get<double>());
  throw Error("plan." + key, "expected an integer, string or boolean, got " + json_fields::excerpt(v), kKeys);
}

}  // namespace

PlanRequest plan_from_json(const nlohmann::json& j, const ModelSpec& model, const Cluster& cluster) {
  json_fields::require_object(j, "plan");
  std::map<std::string, std::string> kv;
  for (const auto& item : j.items()) {
    if (item.key() == "schema_version" || item.key() == "notes") continue;
    kv[item.key()] = json_value_text(item.key(), item.value());
  }
  return build(kv, model, cluster);
}

PlanRequest load_plan(const std::string& text, const ModelSpec& model, const Cluster& cluster) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(text, ec)) {
    auto j = json_fields::parse_file(text, "plan");
    // A plan file written by `tessera plan --emit json` nests the plan under "plan".
    if (j.is_object() && j.contains("plan") && j.at("plan").is_object()) j = j.at("plan");
    return plan_from_json(j, model, cluster);
  }
  std::map<std::string, std::string> kv;
  for (auto& [key, value] : key_value_items(text, "plan", std::string("key=value pairs with keys ") + kKeys))
    kv[key] = std::move(value);
  return build(kv, model, cluster);
}

namespace {
std::string without_spaces_around(const std::string& text) {
  const std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}
}  // namespace

std::vector<std::pair<std::string, std::string>> key_value_items(const std::string& text, const std::string& field,
                                                                 const std::string& allowed) {
  std::vector<std::pair<std::string, std::string>> items;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t comma = text.find(',', start);
    const std::string item =
        without_spaces_around(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (!item.empty()) {
      const auto eq = item.find('=');
      const std::string key = eq == std::string::npos ? "" : without_spaces_around(item.substr(0, eq));
      if (key.empty()) throw Error(field, "'" + item + "' is not key=value", allowed);
      for (const auto& [seen, unused] : items)
        if (seen == key) throw Error(field + "." + key, "given twice", "each key once");
      items.emplace_back(key, without_spaces_around(item.substr(eq + 1)));
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return items;
}

nlohmann::json plan_to_json(const Plan& p, const Workload& w) {
  return {{"tp", p.tp},
          {"pp", p.pp},
          {"dp", p.dp},
          {"cp", p.cp},
          {"ep", p.ep},
          {"vpp", p.vpp},
          {"mb", p.micro_batch},
          {"gbs", w.global_batch},
          {"seq", w.seq_len},
          {"recompute", to_string(p.recompute)},
          {"recompute_layers", p.recompute_layers},
          {"sp", p.sequence_parallel},
          {"zero", to_string(p.zero)},
          {"precision", to_string(p.precision)},
          {"overlap_grad", p.overlap_grad_reduce},
          {"overlap_param", p.overlap_param_gather},
          {"overlap_tp", p.overlap_tp_comm},
          {"overlap_p2p", p.overlap_p2p},
          {"flash", p.flash_attention},
          {"p2p_sg", p.p2p_scatter_gather},
          {"first_stage_layers", p.first_stage_layers},
          {"last_stage_layers", p.last_stage_layers},
          {"account_embedding", p.account_embedding},
          {"account_loss", p.account_loss},
          {"etp", p.etp},
          {"dispatcher", to_string(p.dispatcher)},
          {"capacity_factor", p.capacity_factor},
          {"force_balance", p.force_balance},
          {"overlap_ep", p.overlap_ep},
          {"delay_wgrad", p.delay_wgrad},
          {"fp8_recipe", to_string(p.fp8_recipe)},
          {"fp8_param_gather", p.fp8_param_gather},
          {"recompute_modules", recompute_modules_text(p.recompute_modules)},
          {"reshard", p.reshard_after_forward},
          {"framework", to_string(p.framework)},
          {"offload_optimizer", to_string(p.offload.optimizer)},
          {"offload_params", to_string(p.offload.params)},
          {"offload_activations", to_string(p.offload.activations)},
          {"task", to_string(p.tuning.task)},
          {"lora_rank", p.tuning.lora_rank},
          {"lora_targets", lora_targets_text(p.tuning.lora_targets)}};
}

std::string plan_to_shorthand(const Plan& p, const Workload& w) {
  std::string s = fmt::format("tp={},pp={},dp={},cp={},ep={},vpp={},mb={},gbs={},seq={},recompute={},sp={},zero={},precision={}",
                              p.tp, p.pp, p.dp, p.cp, p.ep, p.vpp, p.micro_batch, w.global_batch,
                              w.seq_len, to_string(p.recompute), p.sequence_parallel ? 1 : 0,
                              to_string(p.zero), to_string(p.precision));
  if (p.recompute_layers) s += fmt::format(",recompute_layers={}", p.recompute_layers);
  if (!p.flash_attention) s += ",flash=0";
  if (!p.overlap_grad_reduce) s += ",overlap_grad=0";
  if (!p.overlap_param_gather) s += ",overlap_param=0";
  if (p.overlap_tp_comm) s += ",overlap_tp=1";
  if (!p.overlap_p2p) s += ",overlap_p2p=0";
  if (!p.p2p_scatter_gather) s += ",p2p_sg=0";
  if (p.first_stage_layers) s += fmt::format(",first_stage_layers={}", p.first_stage_layers);
  if (p.last_stage_layers) s += fmt::format(",last_stage_layers={}", p.last_stage_layers);
  if (p.account_embedding) s += ",account_embedding=1";
  if (p.account_loss) s += ",account_loss=1";
  if (p.etp != 0 && p.etp != p.tp) s += fmt::format(",etp={}", p.etp);
  if (p.dispatcher != MoeDispatcher::alltoall) s += fmt::format(",dispatcher={}", to_string(p.dispatcher));
  if (p.capacity_factor != 0) s += fmt::format(",capacity_factor={}", p.capacity_factor);
  if (p.force_balance) s += ",force_balance=1";
  if (p.overlap_ep) s += ",overlap_ep=1";
  if (p.delay_wgrad) s += ",delay_wgrad=1";
  if (p.precision == Precision::fp8 && p.fp8_recipe != Fp8Recipe::tensorwise)
    s += fmt::format(",fp8_recipe={}", to_string(p.fp8_recipe));
  if (p.fp8_param_gather) s += ",fp8_param_gather=1";
  if (p.recompute_modules) s += ",recompute_modules=" + recompute_modules_text(p.recompute_modules);
  if (!p.reshard_after_forward) s += ",reshard=0";
  if (p.framework != TrainingFramework::megatron) s += std::string(",framework=") + to_string(p.framework);
  if (p.offload.optimizer != MemoryTier::gpu) s += std::string(",offload_optimizer=") + to_string(p.offload.optimizer);
  if (p.offload.params != MemoryTier::gpu) s += std::string(",offload_params=") + to_string(p.offload.params);
  if (p.offload.activations != MemoryTier::gpu) s += std::string(",offload_activations=") + to_string(p.offload.activations);
  if (p.tuning.task != TrainingTask::pretrain) s += std::string(",task=") + to_string(p.tuning.task);
  if (p.tuning.adapters())
    s += fmt::format(",lora_rank={},lora_targets={}", p.tuning.lora_rank, lora_targets_text(p.tuning.lora_targets));
  return s;
}

bool parse_switch(const std::string& key, const std::string& text) {
  if (text == "1" || text == "true" || text == "yes" || text == "on") return true;
  if (text == "0" || text == "false" || text == "no" || text == "off") return false;
  throw Error(key, "'" + text + "' is not a switch", "1, 0, true, false, yes, no, on, off");
}

}  // namespace tessera
