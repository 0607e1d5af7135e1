#include "search/colocated_plan.h"

#include <algorithm>
#include <limits>
#include <string>

#include "core/error.h"
#include "core/units.h"
#include "cost/collective_cost.h"
#include "search/monolithic_plan.h"
#include "search/planner.h"

namespace tessera {

namespace {

// Boundary reshapes per step: the media tokens forward, their gradients back (trainable groups).
constexpr double kTrainableBoundaryCrossings = 2.0;

// What an own-layout group adds to the step and to every GPU's memory.
struct OwnGroupCost {
  GroupLayout layout;
  double phases_s = 0;    // forward + backward phases + gradient sync
  double boundary_s = 0;  // both directions
  double memory_bytes = 0;
  std::vector<double> member_busy_s;  // per member: forward + backward, on the busiest rank
  std::vector<double> member_memory_bytes;
  double time_s() const { return phases_s + boundary_s; }
};

// The projected media tokens of the whole step, 16-bit at the backbone's width (what the group
// hands to the backbone; as disaggregated_pipeline.cpp group_transfer_s, per step).
double boundary_bytes(const MultimodalSpec& model, const ModuleGroup& group, const SlotLoads& loads) {
  double tokens = 0;
  for (std::size_t i : group.members)
    if (model.modules[i].role == ModuleRole::projector)
      for (const ModuleLoad& slot : loads.per_module[i]) tokens += slot.tokens;
  return units::kBytesBf16 * tokens * static_cast<double>(model.backbone().transformer.hidden);
}

// The whole step as one slot: an own-layout phase runs its share of the step in one pass.
SlotLoads step_load(const MultimodalSpec& model, const std::vector<PackedSequence>& seqs) {
  return slot_loads(model, seqs, 1, static_cast<std::int64_t>(seqs.size()));
}

bool any_trainable(const MultimodalSpec& model, const ModuleGroup& group) {
  return std::any_of(group.members.begin(), group.members.end(),
                     [&](std::size_t i) { return model.modules[i].trainable; });
}

OwnGroupCost own_group_cost(const MultimodalSpec& model, const Cluster& cluster, const ModuleGroup& group,
                            const SlotLoads& loads, const GroupLayout& layout, const Plan& backbone) {
  OwnGroupCost c;
  c.layout = layout;
  const ModulePlan& plan = layout.own;
  // The step's share of this GPU is held from the forward phase to the backward phase.
  const double held_share = 1.0 / static_cast<double>(plan.dp);
  for (std::size_t i : group.members) {
    const ModuleSpec& m = model.modules[i];
    const GroupSlotTimes t =
        group_slot_times(model, cluster, ModuleGroup{{i}, group.before_backbone, group.tp_limit}, loads, plan);
    double busy = 0;
    for (std::size_t j = 0; j < t.fwd_s.size(); ++j) busy += t.fwd_s[j] + t.bwd_s[j];
    c.member_busy_s.push_back(busy);
    c.phases_s += busy + module_grad_sync_s(m, cluster, plan);
    MemoryBreakdown mm = module_memory(m, plan, scaled(loads.heaviest[i], held_share), cluster.gpu);
    mm.framework_bytes = 0;  // the backbone's reserve covers the GPU
    c.member_memory_bytes.push_back(mm.total());
    c.memory_bytes += mm.total();
  }
  const double crossings = any_trainable(model, group) ? kTrainableBoundaryCrossings : 1.0;
  c.boundary_s = crossings * boundary_reshape_s(boundary_bytes(model, group, loads), layout, backbone, cluster);
  return c;
}

void check_layouts(const std::vector<ModuleGroup>& groups, const ColocatedLayouts& layouts, const Cluster& cluster) {
  if (layouts.groups.size() != groups.size())
    throw Error(
        "layouts",
        std::to_string(layouts.groups.size()) + " layouts for " + std::to_string(groups.size()) + " module groups",
        "one layout per module group");
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const GroupLayout& l = layouts.groups[k];
    if (l.shares_backbone) continue;
    if (!groups[k].before_backbone)
      throw Error("layouts", "a generator with its own layout", "the generator shares the backbone's layout");
    if (l.own.tp < 1 || l.own.dp < 1 || l.own.gpus() != cluster.gpus())
      throw Error("layouts", "own layout tp=" + std::to_string(l.own.tp) + ", dp=" + std::to_string(l.own.dp),
                  "tp x dp = the cluster's " + std::to_string(cluster.gpus()) + " GPUs");
  }
}

std::vector<bool> folded_modules(const MultimodalSpec& model, const std::vector<ModuleGroup>& groups,
                                 const ColocatedLayouts& layouts) {
  std::vector<bool> folded(model.modules.size(), true);
  for (std::size_t k = 0; k < groups.size(); ++k)
    for (std::size_t i : groups[k].members) folded[i] = layouts.groups[k].shares_backbone;
  return folded;
}

// The folded pipeline plus the own-layout groups' costs, as a colocated plan.
MultimodalPlan compose(const Cluster& cluster, const std::vector<ModuleGroup>& groups, MultimodalPlan base,
                       const std::vector<const OwnGroupCost*>& own, double memory_limit_bytes) {
  base.colocated = true;
  for (std::size_t k = 0; k < groups.size(); ++k) {
    if (own[k] == nullptr) continue;
    const OwnGroupCost& c = *own[k];
    base.module_phases_s += c.phases_s;
    base.boundary_s += c.boundary_s;
    base.peak_memory_bytes += c.memory_bytes;  // on every GPU, so on the peak stage too
    for (std::size_t n = 0; n < groups[k].members.size(); ++n) {
      ModulePlacement& pl = base.modules[groups[k].members[n]];
      pl.gpus = cluster.gpus();
      pl.plan = c.layout.own;
      pl.busy_s = c.member_busy_s[n];
      pl.peak_memory_bytes = c.member_memory_bytes[n];
      pl.own_layout = true;
    }
  }
  base.iteration_time_s += base.module_phases_s + base.boundary_s;
  base.fits = base.peak_memory_bytes <= memory_limit_bytes;
  return base;
}

// An encoder group's own layouts on every GPU of `cluster`.
std::vector<GroupLayout> own_layouts(const MultimodalSpec& model, const ModuleGroup& group, const Cluster& cluster) {
  std::vector<GroupLayout> out;
  const std::int64_t gpus = cluster.gpus();
  for (std::int64_t tp = 1; tp <= std::min(group.tp_limit, gpus); tp *= 2) {
    if (gpus % tp != 0) continue;
    const bool heads_ok = std::all_of(group.members.begin(), group.members.end(), [&](std::size_t i) {
      const ModuleSpec& m = model.modules[i];
      return m.role == ModuleRole::projector || m.transformer.heads % tp == 0;
    });
    if (!heads_ok) continue;
    for (Recompute rc : {Recompute::none, Recompute::full}) out.push_back({false, ModulePlan{tp, gpus / tp, rc}});
  }
  return out;
}

// The fastest combination of the own groups' options that fits beside `base_memory_bytes`
// (index per own group into options), or an empty vector when none fits. Exhaustive: at most
// (own layouts per group)^(encoder groups) sums.
std::vector<std::size_t> best_combination(const std::vector<const std::vector<OwnGroupCost>*>& options,
                                          double base_memory_bytes, double memory_limit_bytes) {
  std::vector<std::size_t> at(options.size(), 0), best;
  double best_s = kInfinity;
  for (;;) {
    double time_s = 0, memory = base_memory_bytes;
    for (std::size_t k = 0; k < options.size(); ++k) {
      time_s += (*options[k])[at[k]].time_s();
      memory += (*options[k])[at[k]].memory_bytes;
    }
    if (memory <= memory_limit_bytes && time_s < best_s) {
      best_s = time_s;
      best = at;
    }
    std::size_t k = 0;
    while (k < options.size() && ++at[k] == options[k]->size()) at[k++] = 0;
    if (k == options.size()) return best;
  }
}

}  // namespace

ColocatedLayouts shared_layouts(const MultimodalSpec& model, std::int64_t gpus_per_node, Recompute shared_recompute) {
  ColocatedLayouts l;
  l.shared_recompute = shared_recompute;
  l.groups.assign(module_groups(model, gpus_per_node).size(), GroupLayout{});
  return l;
}

double boundary_reshape_s(double bytes, const GroupLayout& layout, const Plan& backbone, const Cluster& cluster) {
  if (layout.shares_backbone || bytes <= 0) return 0.0;
  const double send = bytes / static_cast<double>(layout.own.gpus());
  const std::int64_t shards = backbone.dp * backbone.cp * (backbone.sequence_parallel ? backbone.tp : 1);
  const double receive = bytes / static_cast<double>(shards);
  return expert_all_to_all_time_s(std::max(send, receive), cluster.gpus(), 1, cluster);
}

MultimodalPlan colocated_plan(const MultimodalSpec& model, const Cluster& cluster,
                              const std::vector<PackedSequence>& seqs, const Plan& plan, const Workload& w,
                              const ColocatedLayouts& layouts, double memory_limit_bytes, std::int64_t max_replicas) {
  const std::vector<ModuleGroup> groups = module_groups(model, cluster.gpus_per_node);
  check_layouts(groups, layouts, cluster);
  if (plan.gpus() != cluster.gpus())
    throw Error("plan",
                "the backbone on " + std::to_string(plan.gpus()) + " of " + std::to_string(cluster.gpus()) + " GPUs",
                "a colocated backbone on every GPU");
  const MultimodalPlan base =
      folded_pipeline_plan(model, cluster, seqs, plan, w, memory_limit_bytes, layouts.shared_recompute, max_replicas,
                           folded_modules(model, groups, layouts));
  const SlotLoads loads = step_load(model, seqs);
  std::vector<OwnGroupCost> costs(groups.size());
  std::vector<const OwnGroupCost*> own(groups.size(), nullptr);
  for (std::size_t k = 0; k < groups.size(); ++k) {
    if (layouts.groups[k].shares_backbone) continue;
    costs[k] = own_group_cost(model, cluster, groups[k], loads, layouts.groups[k], plan);
    own[k] = &costs[k];
  }
  return compose(cluster, groups, base, own, memory_limit_bytes);
}

ColocatedSearch search_colocated(const MultimodalSpec& model, const Cluster& cluster,
                                 const std::vector<PackedSequence>& seqs, const std::vector<Plan>& backbone_plans,
                                 const Workload& w, double memory_limit_bytes, std::int64_t replicas_ranked) {
  ColocatedSearch out;
  const std::vector<ModuleGroup> groups = module_groups(model, cluster.gpus_per_node);
  std::vector<std::size_t> encoders;  // the groups that may take their own layout
  for (std::size_t k = 0; k < groups.size(); ++k)
    if (groups[k].before_backbone) encoders.push_back(k);
  const std::size_t masks = std::size_t{1} << encoders.size();
  const bool has_generator = encoders.size() < groups.size();
  double best_s = kInfinity;
  Plan best_plan;
  const SlotLoads loads = step_load(model, seqs);
  for (const Plan& plan : backbone_plans) {
    // Each encoder group's own options (none for an idle group: it has nothing to run).
    std::vector<std::vector<OwnGroupCost>> options(groups.size());
    for (std::size_t k : encoders) {
      if (group_is_idle(groups[k], loads)) continue;
      for (const GroupLayout& l : own_layouts(model, groups[k], cluster))
        options[k].push_back(own_group_cost(model, cluster, groups[k], loads, l, plan));
    }
    for (Recompute shared_recompute : {Recompute::none, Recompute::full})
      for (std::size_t mask = 0; mask < masks; ++mask) {
        ColocatedLayouts layouts = shared_layouts(model, cluster.gpus_per_node, shared_recompute);
        std::vector<const std::vector<OwnGroupCost>*> own_options;
        bool possible = true;
        for (std::size_t e = 0; e < encoders.size(); ++e) {
          if ((mask >> e & 1U) == 0) continue;
          possible = possible && !options[encoders[e]].empty();
          layouts.groups[encoders[e]].shares_backbone = false;
          own_options.push_back(&options[encoders[e]]);
        }
        // With every module in its own phase the shared recompute changes nothing: cost it once.
        const bool nothing_folded = mask == masks - 1 && !has_generator;
        if (!possible || (nothing_folded && shared_recompute == Recompute::full)) continue;
        const MultimodalPlan base =
            folded_pipeline_plan(model, cluster, seqs, plan, w, memory_limit_bytes, shared_recompute, replicas_ranked,
                                 folded_modules(model, groups, layouts));
        ++out.evaluated;
        std::vector<std::size_t> pick;
        if (!own_options.empty()) {
          pick = best_combination(own_options, base.peak_memory_bytes, memory_limit_bytes);
          if (pick.empty()) continue;
        } else if (!base.fits) {
          continue;
        }
        double time_s = base.iteration_time_s;
        for (std::size_t n = 0; n < pick.size(); ++n) time_s += (*own_options[n])[pick[n]].time_s();
        if (time_s >= best_s) continue;
        best_s = time_s;
        best_plan = plan;
        std::size_t n = 0;
        for (std::size_t e = 0; e < encoders.size(); ++e) {
          if ((mask >> e & 1U) == 0) continue;
          layouts.groups[encoders[e]] = (*own_options[n])[pick[n]].layout;
          ++n;
        }
        out.layouts = layouts;
        out.found = true;
      }
  }
  if (out.found) out.plan = colocated_plan(model, cluster, seqs, best_plan, w, out.layouts, memory_limit_bytes, 0);
  return out;
}

}  // namespace tessera
