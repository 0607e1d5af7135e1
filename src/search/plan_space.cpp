#include "search/plan_space.h"

#include <algorithm>
#include <tuple>

#include "core/divisors.h"
#include "core/error.h"
#include "search/confidence.h"

namespace tessera {

namespace {
constexpr unsigned kInsideMoeModule = kRecomputeMoeAct | kRecomputeSharedExperts;

// The modules of an explicit set (core_attn spelled out) that exist in this model and are not
// already inside another recomputed module.
unsigned effective_modules(unsigned modules, const ModelSpec& m) {
  if (m.dense_mlp_layers() == 0) modules &= ~unsigned{kRecomputeMlp};
  if (!m.is_moe() || m.moe.shared_experts == 0) modules &= ~unsigned{kRecomputeSharedExperts};
  if (modules & kRecomputeMoe) modules &= ~kInsideMoeModule;
  return modules;
}
// Plan encoding: core_attn alone is Megatron's default, 0.
unsigned encoded_modules(unsigned modules) { return modules == kRecomputeCoreAttn ? 0u : modules; }

// The pinned value alone, else every value searched.
template <typename T>
std::vector<T> pinned_or(const std::optional<T>& pin, std::vector<T> all) {
  if (pin) return {*pin};
  return all;
}
}  // namespace

Plan canonical_plan(const Plan& plan, const ModelSpec& m) {
  Plan p = plan;
  const Plan defaults;
  if (!m.is_moe()) {
    p.etp = 0;
    p.capacity_factor = 0;
    p.force_balance = false;
  }
  if (!m.is_moe() || p.ep == 1) {
    p.dispatcher = defaults.dispatcher;
    p.overlap_ep = false;
    p.delay_wgrad = false;
  }
  if (p.etp == p.tp) p.etp = 0;
  if (p.precision != Precision::fp8) {
    p.fp8_recipe = defaults.fp8_recipe;
    p.fp8_param_gather = false;
  }
  if (p.recompute != Recompute::selective) {
    p.recompute_modules = 0;
  } else {
    const unsigned kept = effective_modules(p.selective_modules(), m);
    // Every named module is absent from this model: nothing is recomputed.
    if (kept == 0) p.recompute = Recompute::none;
    p.recompute_modules = encoded_modules(kept);
  }
  if (p.zero != OptimizerSharding::zero3) p.reshard_after_forward = defaults.reshard_after_forward;
  if (p.recompute == Recompute::full && p.recompute_layers > 0 && p.recompute_layers >= m.layers)
    p.recompute_layers = 0;
  if (p.tp == 1) p.sequence_parallel = false;
  if (!p.sequence_parallel) p.overlap_tp_comm = false;
  return p;
}

int cross_node_groups(const Plan& p, const Cluster& c) {
  const auto crosses = [&](std::int64_t group_gpus) { return group_gpus > 1 && nodes_spanned(group_gpus, c) > 1 ? 1 : 0; };
  return crosses(p.tp) + (p.cp > 1 ? crosses(p.tp * p.cp) : 0) + (p.ep > 1 ? crosses(p.expert_tp() * p.ep) : 0);
}

bool same_configuration(const Plan& a, const Plan& b) {
  const auto fields = [](const Plan& p) {
    return std::tie(p.tp, p.pp, p.dp, p.cp, p.ep, p.etp, p.vpp, p.micro_batch, p.sequence_parallel, p.recompute,
                    p.recompute_layers, p.zero, p.precision, p.overlap_grad_reduce, p.overlap_param_gather,
                    p.overlap_tp_comm, p.overlap_p2p, p.dispatcher, p.capacity_factor, p.force_balance,
                    p.overlap_ep, p.delay_wgrad, p.fp8_recipe, p.fp8_param_gather, p.recompute_modules,
                    p.reshard_after_forward, p.framework, p.flash_attention, p.p2p_scatter_gather, p.first_stage_layers,
                    p.last_stage_layers, p.account_embedding, p.account_loss, p.offload, p.tuning);
  };
  return fields(a) == fields(b);
}

std::vector<unsigned> searched_recompute_modules(const ModelSpec& m) {
  std::vector<unsigned> sets{0u};  // core_attn (Korthikanti et al.'s selective recompute)
  if (!m.is_moe()) return sets;
  const bool mla = m.attention == AttentionKind::mla;
  const unsigned mla_up = mla ? unsigned{kRecomputeMlaUpProj} : 0u;
  const unsigned candidates[] = {
      kRecomputeMoeAct,
      kRecomputeLayernorm | kRecomputeMoeAct,
      mla_up,
      kRecomputeLayernorm | mla_up | kRecomputeMlp | kRecomputeMoeAct,
      kRecomputeLayernorm | mla_up | kRecomputeMlp | kRecomputeMoe,
  };
  for (unsigned c : candidates) {
    const unsigned k = encoded_modules(effective_modules(c, m));
    if (k == 0) continue;  // mla_up_proj alone on a model without MLA
    if (std::find(sets.begin(), sets.end(), k) == sets.end()) sets.push_back(k);
  }
  return sets;
}

void searched_expert_comm(const ModelSpec& m, std::int64_t ep, std::vector<ExpertComm>& out) {
  out.clear();
  if (!m.is_moe() || ep == 1) {
    out.push_back(ExpertComm{});
    return;
  }
  for (MoeDispatcher d : {MoeDispatcher::alltoall, MoeDispatcher::flex}) {
    out.push_back({d, false, false});
    out.push_back({d, true, false});
    out.push_back({d, true, true});
  }
  out.push_back({MoeDispatcher::allgather, false, false});
}

std::vector<std::int64_t> searched_expert_tp(const ModelSpec& m, std::int64_t tp, std::int64_t cp, std::int64_t dp,
                                             std::int64_t ep) {
  if (!m.is_moe()) return {0};
  // Expert layers regroup the stage's tp x cp x dp ranks as etp x ep x edp: etp x ep must divide
  // them (Megatron-Core's parallel_state), for the default etp = tp too.
  const std::int64_t ranks = tp * cp * dp;
  std::vector<std::int64_t> out;
  if (ranks % (tp * ep) == 0) out.push_back(0);
  if (ep == 1) return out;
  for (std::int64_t e : divisors(tp, tp))
    if (e < tp && ranks % (e * ep) == 0) out.push_back(e);
  return out;
}

Fp8Recipe natural_fp8_recipe(const GpuSpec& gpu) { return gpu.mxfp8 ? Fp8Recipe::mxfp8 : Fp8Recipe::tensorwise; }

bool is_valid_plan(const Plan& p, const ModelSpec& model, const Cluster& cluster, const Workload& workload) {
  try {
    validate_plan(p, model, cluster, workload);
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::vector<PlanShape> enumerate_shapes(const ModelSpec& model, const Cluster& cluster, const Workload& workload,
                                        const PlanConstraints& fix) {
  const std::int64_t gpus = cluster.gpus();
  std::vector<PlanShape> shapes;
  const std::int64_t tp_limit = fix.allow_cross_node_tp ? gpus : std::min<std::int64_t>(gpus, cluster.gpus_per_node);
  for (std::int64_t tp : pinned_or(fix.tp, divisors(model.heads, tp_limit))) {
    if (gpus % tp != 0 || model.heads % tp != 0) continue;
    if (model.attention != AttentionKind::mla && model.kv_heads % tp != 0 && tp % model.kv_heads != 0) continue;
    for (std::int64_t pp : pinned_or(fix.pp, divisors(gpus / tp, model.layers))) {
      if ((gpus / tp) % pp != 0) continue;
      for (std::int64_t cp : pinned_or(fix.cp, divisors(gpus / (tp * pp), workload.seq_len))) {
        if ((gpus / (tp * pp)) % cp != 0) continue;
        if (!context_parallel_supported(cp, workload.seq_len, fix.defaults.flash_attention)) continue;
        const std::int64_t dp = gpus / (tp * pp * cp);
        std::vector<std::int64_t> eps{1};
        if (model.is_moe()) eps = divisors(model.moe.experts, model.moe.experts);
        for (std::int64_t ep : pinned_or(fix.ep, eps)) {
          if (ep > 1 && (!model.is_moe() || model.moe.experts % ep != 0 || (dp * cp * tp) % ep != 0)) continue;
          std::vector<std::int64_t> etps = searched_expert_tp(model, tp, cp, dp, ep);
          if (fix.etp) {
            // A pinned etp equal to tp is the default (0); a dense model has no expert layers.
            const std::int64_t e = *fix.etp == tp || !model.is_moe() ? 0 : *fix.etp;
            if (!model.is_moe() && *fix.etp > 1) continue;
            if (model.is_moe() && (dp * cp * tp) % ((e == 0 ? tp : e) * ep) != 0) continue;
            etps = {e};
          }
          for (std::int64_t etp : etps) shapes.push_back({tp, pp, cp, ep, etp});
        }
      }
    }
  }
  return shapes;
}

SearchChoices search_choices(const ModelSpec& model, const Cluster& cluster, const PlanConstraints& fix) {
  SearchChoices c;
  c.recomputes =
      fix.recompute_modules ? std::vector<Recompute>{Recompute::selective}
                            : pinned_or(fix.recompute, fix.recompute_choices.empty()
                                                           ? std::vector<Recompute>{Recompute::none, Recompute::selective, Recompute::full}
                                                           : fix.recompute_choices);
  // One GPU has nothing to shard over: optimizer sharding there only adds ZeRO-3's gathers, unless
  // state is offloaded (ZeRO-Offload and FSDP's CPU offload run on a sharded optimizer, also alone).
  const std::int64_t gpus = cluster.gpus();
  const bool unsharded_alone = gpus == 1 && !fix.defaults.offload.any_offload();
  c.zeros = pinned_or(
      fix.zero, unsharded_alone ? std::vector<OptimizerSharding>{OptimizerSharding::none}
                : fix.zero_choices.empty()
                    ? std::vector<OptimizerSharding>{OptimizerSharding::none, OptimizerSharding::zero1, OptimizerSharding::zero3}
                    : fix.zero_choices);
  c.precisions =
      pinned_or(fix.precision, fix.precision_choices.empty() ? std::vector<Precision>{Precision::bf16} : fix.precision_choices);
  c.recipe = fix.fp8_recipe.value_or(natural_fp8_recipe(cluster.gpu));
  // FP8 only where the GPU runs it (and its recipe); validate_plan's rule, checked once here.
  std::erase_if(c.precisions, [&](Precision p) {
    return p == Precision::fp8 && (cluster.gpu.fp8_tflops <= 0 || (c.recipe == Fp8Recipe::mxfp8 && !cluster.gpu.mxfp8));
  });
  // --fix overlap_tp (or a caller's defaults with it on) pins TP-communication overlap.
  c.overlap_tp_pin =
      fix.overlap_tp_comm ? fix.overlap_tp_comm : fix.defaults.overlap_tp_comm ? std::optional<bool>{true} : std::nullopt;
  c.module_sets =
      fix.recompute_modules ? std::vector<unsigned>{*fix.recompute_modules} : searched_recompute_modules(model);
  return c;
}

}  // namespace tessera
