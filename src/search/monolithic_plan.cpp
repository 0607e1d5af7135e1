#include "search/monolithic_plan.h"

#include <algorithm>
#include <functional>

#include "core/error.h"
#include "cost/compute_cost.h"
#include "cost/cost_model.h"
#include "cost/module_cost.h"
#include "cost/pipeline_runs.h"
#include "search/module_group.h"

namespace tessera {

MultimodalPlan monolithic_plan(const MultimodalSpec& model, const Cluster& cluster, const std::vector<PackedSequence>& seqs,
                               const Plan& plan, const Workload& w, double memory_limit_bytes, Recompute module_recompute,
                               std::int64_t max_replicas) {
  return folded_pipeline_plan(model, cluster, seqs, plan, w, memory_limit_bytes, module_recompute, max_replicas,
                              std::vector<bool>(model.modules.size(), true));
}

namespace {
// The backbone's own host dispatch per virtual stage (its layers' operators), forward and backward.
struct StageDispatch {
  std::vector<double> fwd_s, bwd_s;
};
StageDispatch backbone_dispatch(const MultimodalSpec& model, const Cluster& cluster, const Plan& plan) {
  const std::int64_t virtual_stages = plan.pp * plan.vpp;
  const LayerSplit split = split_layers(plan, model.backbone().transformer.layers);
  const double host_layer_fwd_s = kHostOpsPerLayerForward * cluster.gpu.host_op_dispatch_s;
  StageDispatch d{std::vector<double>(static_cast<std::size_t>(virtual_stages)),
                  std::vector<double>(static_cast<std::size_t>(virtual_stages))};
  for (std::int64_t k = 0; k < virtual_stages; ++k) {
    const auto layers = static_cast<double>(split.virtual_stage_layers(k));
    const auto recomputed = static_cast<double>(plan.recomputed_layers(split.virtual_stage_layers(k)));
    d.fwd_s[static_cast<std::size_t>(k)] = layers * host_layer_fwd_s;
    d.bwd_s[static_cast<std::size_t>(k)] =
        layers * kHostBackwardOverForward * host_layer_fwd_s + (plan.recompute == Recompute::full ? recomputed * host_layer_fwd_s : 0.0);
  }
  return d;
}

// Where each module runs in a folded pipeline: the backbone on every GPU of the plan, a folded
// module on each stage's tp x cp x dp ranks (busy for its heaviest replica), one left out nowhere.
std::vector<ModulePlacement> folded_placements(const MultimodalSpec& model, const std::vector<bool>& folded,
                                               const Plan& plan, const ModulePlan& module_plan, const Estimate& backbone,
                                               const std::vector<double>& busy) {
  std::vector<ModulePlacement> out;
  for (std::size_t i = 0; i < model.modules.size(); ++i) {
    const ModuleSpec& mod = model.modules[i];
    ModulePlacement pl;
    pl.name = mod.name;
    pl.role = mod.role;
    const bool left_out = mod.role != ModuleRole::backbone && !folded[i];
    pl.gpus = mod.role == ModuleRole::backbone ? plan.gpus() : left_out ? 0 : plan.tp * plan.cp * plan.dp;
    pl.plan = module_plan;
    pl.busy_s = mod.role == ModuleRole::backbone ? backbone.time.compute_s : busy[i];
    pl.peak_memory_bytes = mod.role == ModuleRole::backbone ? backbone.peak_memory_bytes : 0.0;
    out.push_back(pl);
  }
  return out;
}
}  // namespace

MultimodalPlan folded_pipeline_plan(const MultimodalSpec& model, const Cluster& cluster,
                                    const std::vector<PackedSequence>& seqs, const Plan& plan, const Workload& w,
                                    double memory_limit_bytes, Recompute module_recompute, std::int64_t max_replicas,
                                    const std::vector<bool>& folded) {
  if (folded.size() != model.modules.size())
    throw Error("folded",
                std::to_string(folded.size()) + " flags for " + std::to_string(model.modules.size()) + " modules",
                "one flag per module");
  // The modules that run inside the backbone's stages.
  auto inside = [&](std::size_t i) { return model.modules[i].role != ModuleRole::backbone && folded[i]; };
  MultimodalPlan out;
  out.backbone_plan = plan;
  out.backbone_gpus = plan.gpus();
  out.gpus_used = plan.gpus();
  out.gpus_idle = cluster.gpus() - plan.gpus();
  PipelineInputs inputs;
  const Estimate e = estimate_with_pipeline_inputs(model.backbone().transformer, cluster, plan, w, inputs);
  const std::int64_t m = plan.microbatches(w);
  const std::int64_t per_replica = static_cast<std::int64_t>(seqs.size()) / plan.dp;
  const std::int64_t virtual_stages = plan.pp * plan.vpp;
  const std::size_t modules = model.modules.size();
  const ModulePlan module_plan{plan.tp, plan.dp, module_recompute};
  // Modules run on a stage's tp group; context-parallel ranks split a micro-batch's media.
  const double cp_share = 1.0 / static_cast<double>(plan.cp);
  auto micro_batch_load = [&](std::int64_t r, std::int64_t j, std::size_t i) {
    ModuleLoad load;
    for (std::int64_t k = 0; k < plan.micro_batch; ++k)
      load += seqs[static_cast<std::size_t>(r * per_replica + j * plan.micro_batch + k)].modules[i];
    return load;
  };
  // Module work per replica, and each module's heaviest micro-batch (for memory).
  std::vector<std::pair<double, std::int64_t>> replicas;
  std::vector<ModuleLoad> heaviest(modules);
  std::vector<double> heaviest_weight(modules, -1.0);
  for (std::int64_t r = 0; r < plan.dp; ++r) {
    double work = 0;
    for (std::int64_t j = 0; j < m; ++j)
      for (std::size_t i = 0; i < modules; ++i) {
        const ModuleSpec& mod = model.modules[i];
        if (!inside(i)) continue;
        const ModuleLoad load = micro_batch_load(r, j, i);
        const double weight = load_weight(mod, load);
        work += weight;
        if (weight > heaviest_weight[i]) {
          heaviest_weight[i] = weight;
          heaviest[i] = load;
        }
      }
    replicas.emplace_back(work, r);
  }
  std::sort(replicas.begin(), replicas.end(), std::greater<>());
  if (max_replicas > 0 && static_cast<std::int64_t>(replicas.size()) > max_replicas)
    replicas.resize(static_cast<std::size_t>(max_replicas));

  PipelineCosts costs = inputs.costs;
  // Stage 0 / the last stage also sync the modules' gradients over the dp group.
  for (std::size_t i = 0; i < modules; ++i) {
    const ModuleSpec& mod = model.modules[i];
    if (!inside(i)) continue;
    const std::size_t s = mod.role == ModuleRole::generator ? static_cast<std::size_t>(plan.pp - 1) : 0;
    costs.dp_sync_s[s] += module_grad_sync_s(mod, cluster, module_plan);
  }
  double worst = 0;
  std::vector<double> busy(modules, 0.0);
  const StageDispatch backbone_host = backbone_dispatch(model, cluster, plan);
  const std::vector<double>& backbone_host_fwd = backbone_host.fwd_s;
  const std::vector<double>& backbone_host_bwd = backbone_host.bwd_s;
  const std::size_t cells = inputs.costs.forward_s.size();
  std::vector<double> gpu_fwd(cells), gpu_bwd(cells), host_fwd(cells), host_bwd(cells);
  for (const auto& [work, r] : replicas) {
    std::fill(gpu_fwd.begin(), gpu_fwd.end(), 0.0);
    std::fill(gpu_bwd.begin(), gpu_bwd.end(), 0.0);
    std::fill(host_fwd.begin(), host_fwd.end(), 0.0);
    std::fill(host_bwd.begin(), host_bwd.end(), 0.0);
    std::vector<double> replica_busy(modules, 0.0);
    for (std::int64_t j = 0; j < m; ++j)
      for (std::size_t i = 0; i < modules; ++i) {
        const ModuleSpec& mod = model.modules[i];
        if (!inside(i)) continue;
        // The stage's GPU runs the backbone's kernels and then the module's while one host
        // thread dispatches both: a micro-batch takes the longer of the two sums.
        const ModulePass pass = module_pass_time(mod, cluster, module_plan, scaled(micro_batch_load(r, j, i), cp_share));
        const std::int64_t k = mod.role == ModuleRole::generator ? virtual_stages - 1 : 0;
        const auto slot = static_cast<std::size_t>(k * m + j);
        gpu_fwd[slot] += pass.gpu_fwd_s;
        gpu_bwd[slot] += pass.gpu_bwd_s;
        host_fwd[slot] += pass.host_fwd_s;
        host_bwd[slot] += pass.host_bwd_s;
        replica_busy[i] += pass.gpu_fwd_s + pass.gpu_bwd_s;
      }
    for (std::size_t c = 0; c < cells; ++c) {
      const std::size_t k = c / static_cast<std::size_t>(m);
      costs.forward_s[c] = std::max(inputs.costs.forward_s[c] + gpu_fwd[c], backbone_host_fwd[k] + host_fwd[c]);
      costs.backward_s[c] = std::max(inputs.costs.backward_s[c] + gpu_bwd[c], backbone_host_bwd[k] + host_bwd[c]);
    }
    for (std::size_t i = 0; i < modules; ++i) busy[i] = std::max(busy[i], replica_busy[i]);
    worst = std::max(worst, thread_pipeline_simulator().makespan(costs));
  }
  out.iteration_time_s = worst + inputs.tail_s;
  // Memory: the backbone's stage plus the modules on stage 0 (pp micro-batches in flight under
  // 1F1B) or the last stage (one). The backbone's own peak may sit on another stage.
  double stage0 = e.memory.total(), last = e.memory.total();
  for (std::size_t i = 0; i < modules; ++i) {
    const ModuleSpec& mod = model.modules[i];
    if (!inside(i)) continue;
    const double inflight = mod.role == ModuleRole::generator ? 1.0 : static_cast<double>(plan.pp);
    MemoryBreakdown mm = module_memory(mod, module_plan, scaled(heaviest[i], cp_share * inflight), cluster.gpu);
    mm.framework_bytes = 0;  // the backbone's reserve covers the GPU
    (mod.role == ModuleRole::generator ? last : stage0) += mm.total();
  }
  out.peak_memory_bytes = std::max(stage0, last);
  out.fits = out.peak_memory_bytes <= memory_limit_bytes;
  out.modules = folded_placements(model, folded, plan, module_plan, e, busy);
  return out;
}

std::vector<Plan> monolithic_layouts(const Plan& plan, std::int64_t layers) {
  std::vector<Plan> out{plan};
  if (plan.pp < 2 || plan.vpp != 1 || plan.first_stage_layers != 0 || plan.last_stage_layers != 0 ||
      plan.account_embedding || plan.account_loss)
    return out;
  for (std::int64_t first = (layers + plan.pp - 1) / plan.pp; first >= 1; --first) {
    const std::int64_t rest = layers - first;
    if (rest % (plan.pp - 1) != 0 || rest / (plan.pp - 1) <= first) continue;
    Plan p = plan;
    p.first_stage_layers = first;
    out.push_back(p);
  }
  return out;
}

}  // namespace tessera
