#include "search/plan_space.h"

#include <algorithm>
#include <tuple>

#include "core/divisors.h"
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
                    p.last_stage_layers, p.account_embedding, p.account_loss);
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

}  // namespace tessera
