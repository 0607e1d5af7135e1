#include "formats/plan_constraints_text.h"

#include "core/checks.h"
#include "core/error.h"
#include "formats/integer_text.h"
#include "formats/plan_text.h"

namespace tessera {

namespace {
std::int64_t to_int(const std::string& key, const std::string& text) {
  const std::int64_t v = parse_integer(text, "fix." + key);
  require_positive("fix." + key, v);
  return v;
}
}  // namespace

PlanConstraints parse_constraints(const std::string& text) {
  PlanConstraints c;
  for (const auto& [key, value] : key_value_items(text, "fix", "tp=8,pp=4,...")) {
    if (key == "tp") c.tp = to_int(key, value);
    else if (key == "pp") c.pp = to_int(key, value);
    else if (key == "cp") c.cp = to_int(key, value);
    else if (key == "ep") c.ep = to_int(key, value);
    else if (key == "vpp") c.vpp = to_int(key, value);
    else if (key == "mb") c.micro_batch = to_int(key, value);
    else if (key == "recompute") c.recompute = parse_recompute(value);
    else if (key == "recompute_layers") {
      c.recompute_layers = parse_integer(value, "fix.recompute_layers");
      require_non_negative("fix.recompute_layers", *c.recompute_layers);
    }
    else if (key == "sp") c.sequence_parallel = parse_switch("fix.sp", value);
    else if (key == "zero") c.zero = parse_optimizer_sharding(value);
    else if (key == "precision") c.precision = parse_precision(value);
    else if (key == "etp") {
      c.etp = parse_integer(value, "fix.etp");
      require_non_negative("fix.etp", *c.etp);
    }
    else if (key == "dispatcher") c.dispatcher = parse_moe_dispatcher(value);
    else if (key == "overlap_ep") c.overlap_ep = parse_switch("fix.overlap_ep", value);
    else if (key == "delay_wgrad") c.delay_wgrad = parse_switch("fix.delay_wgrad", value);
    else if (key == "recompute_modules") c.recompute_modules = parse_recompute_modules(value);
    else if (key == "fp8_recipe") c.fp8_recipe = parse_fp8_recipe(value);
    else if (key == "fp8_param_gather") c.fp8_param_gather = parse_switch("fix.fp8_param_gather", value);
    // MoE semantics and FSDP behaviour the search does not vary (they change what is trained or
    // how, not only its speed): every candidate runs with them.
    else if (key == "capacity_factor") c.defaults.capacity_factor = parse_number(value, "fix.capacity_factor");
    else if (key == "force_balance") c.defaults.force_balance = parse_switch("fix.force_balance", value);
    else if (key == "reshard") c.defaults.reshard_after_forward = parse_switch("fix.reshard", value);
    // Switches the search does not vary: they set what every candidate runs with.
    else if (key == "flash") c.defaults.flash_attention = parse_switch("fix.flash", value);
    else if (key == "overlap_grad") c.defaults.overlap_grad_reduce = parse_switch("fix.overlap_grad", value);
    else if (key == "overlap_param") c.defaults.overlap_param_gather = parse_switch("fix.overlap_param", value);
    else if (key == "overlap_tp") c.overlap_tp_comm = parse_switch("fix.overlap_tp", value);
    else if (key == "overlap_p2p") c.defaults.overlap_p2p = parse_switch("fix.overlap_p2p", value);
    else if (key == "p2p_sg") c.defaults.p2p_scatter_gather = parse_switch("fix.p2p_sg", value);
    else if (key == "offload_optimizer") c.offload_optimizer = parse_memory_tier("fix.offload_optimizer", value);
    else if (key == "offload_params") c.offload_params = parse_memory_tier("fix.offload_params", value);
    else if (key == "offload_activations") c.offload_activations = parse_memory_tier("fix.offload_activations", value);
    // What is trained: every candidate trains the same adapters (--task sets the task).
    else if (key == "lora_rank") c.defaults.tuning.lora_rank = parse_integer(value, "fix.lora_rank");
    else if (key == "lora_targets") c.defaults.tuning.lora_targets = parse_lora_targets(value);
    else throw Error("fix." + key, "unknown key",
                     "tp, pp, cp, ep, etp, vpp, mb, recompute, recompute_layers, recompute_modules, sp, zero, "
                     "precision, fp8_recipe, fp8_param_gather, dispatcher, overlap_ep, delay_wgrad, "
                     "capacity_factor, force_balance, reshard, flash, overlap_grad, overlap_param, overlap_tp, "
                     "overlap_p2p, p2p_sg, offload_optimizer, offload_params, offload_activations, lora_rank, "
                     "lora_targets");
  }
  // Keys that only exist under another: pinning them pins that one.
  if (c.recompute_modules) {
    if (c.recompute && *c.recompute != Recompute::selective)
      throw Error("fix.recompute_modules", "only applies to selective recompute", "recompute=selective or unset");
    c.recompute = Recompute::selective;
  }
  if (c.fp8_recipe || c.fp8_param_gather.value_or(false)) {
    if (c.precision && *c.precision != Precision::fp8)
      throw Error(c.fp8_recipe ? "fix.fp8_recipe" : "fix.fp8_param_gather", "only applies to precision=fp8",
                  "precision=fp8 or unset");
    c.precision = Precision::fp8;
  }
  if (c.delay_wgrad.value_or(false)) {
    if (c.overlap_ep && !*c.overlap_ep)
      throw Error("fix.delay_wgrad", "needs overlap_ep (Megatron: delay_wgrad_compute requires overlap_moe_expert_parallel_comm)",
                  "delay_wgrad=0, or overlap_ep=1");
    c.overlap_ep = true;
  }
  return c;
}

}  // namespace tessera
