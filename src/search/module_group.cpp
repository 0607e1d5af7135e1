#include "search/module_group.h"

#include <algorithm>

namespace tessera {

namespace {
// Tensor parallelism tried for a module group: powers of two within a node.
constexpr std::int64_t kMaxModuleTp = 8;
}  // namespace

std::vector<ModuleGroup> module_groups(const MultimodalSpec& model, std::int64_t gpus_per_node) {
  std::vector<ModuleGroup> groups;
  for (std::size_t i = 0; i < model.modules.size(); ++i) {
    const ModuleSpec& m = model.modules[i];
    if (m.role != ModuleRole::encoder && m.role != ModuleRole::generator) continue;
    ModuleGroup g;
    g.members.push_back(i);
    g.before_backbone = m.role == ModuleRole::encoder;
    if (m.role == ModuleRole::encoder)
      for (std::size_t j = 0; j < model.modules.size(); ++j)
        if (model.modules[j].role == ModuleRole::projector && model.modules[j].modality == m.modality)
          g.members.push_back(j);
    g.tp_limit = std::min<std::int64_t>(kMaxModuleTp, gpus_per_node);
    groups.push_back(g);
  }
  return groups;
}

ModuleLoad scaled(const ModuleLoad& l, double factor) {
  return {l.tokens * factor, l.tokens_squared * factor, l.items * factor, l.largest_item_tokens};
}

double load_weight(const ModuleSpec& m, const ModuleLoad& load) {
  return m.role == ModuleRole::backbone ? load.tokens : module_forward_flops(m, load.tokens, load.tokens_squared);
}

SlotLoads slot_loads(const MultimodalSpec& model, const std::vector<PackedSequence>& seqs, std::int64_t dp,
                     std::int64_t mb) {
  SlotLoads s;
  const auto n = static_cast<std::int64_t>(seqs.size());
  const std::int64_t per_replica = n / dp;
  s.slots = per_replica / mb;
  const std::size_t modules = model.modules.size();
  const auto slots = static_cast<std::size_t>(s.slots);
  s.per_module.assign(modules, std::vector<ModuleLoad>(slots));
  for (std::int64_t r = 0; r < dp; ++r)
    for (std::int64_t j = 0; j < s.slots; ++j)
      for (std::int64_t k = 0; k < mb; ++k) {
        const PackedSequence& q = seqs[static_cast<std::size_t>(r * per_replica + j * mb + k)];
        for (std::size_t i = 0; i < modules; ++i) s.per_module[i][static_cast<std::size_t>(j)] += q.modules[i];
      }
  s.weight.assign(modules, std::vector<double>(slots, 0.0));
  s.mean.assign(modules, ModuleLoad{});
  s.mean_weight.assign(modules, 0.0);
  s.heaviest.assign(modules, ModuleLoad{});
  for (std::size_t i = 0; i < modules; ++i) {
    double top = -1;
    ModuleLoad total;
    for (std::size_t j = 0; j < slots; ++j) {
      const ModuleLoad& l = s.per_module[i][j];
      const double w = load_weight(model.modules[i], l);
      s.weight[i][j] = w;
      s.mean_weight[i] += w / static_cast<double>(slots);
      total += l;
      if (w > top) {
        top = w;
        s.heaviest[i] = l;
      }
    }
    s.mean[i] = scaled(total, slots > 0 ? 1.0 / static_cast<double>(slots) : 0.0);
  }
  return s;
}

bool group_is_idle(const ModuleGroup& group, const SlotLoads& loads) {
  for (std::size_t i : group.members)
    if (loads.mean_weight[i] > 0) return false;
  return true;
}

GroupSlotTimes group_slot_times(const MultimodalSpec& model, const Cluster& cluster, const ModuleGroup& group,
                                const SlotLoads& loads, const ModulePlan& plan) {
  GroupSlotTimes t;
  const auto slots = static_cast<std::size_t>(loads.slots);
  t.fwd_s.assign(slots, 0.0);
  t.bwd_s.assign(slots, 0.0);
  if (plan.gpus() == 0) return t;
  const double dp = static_cast<double>(plan.dp);
  for (std::size_t i : group.members) {
    const ModuleSpec& m = model.modules[i];
    if (loads.mean_weight[i] <= 0) continue;
    const ModulePass pass = module_pass_time(m, cluster, plan, scaled(loads.mean[i], 1.0 / dp));
    const double mean_rank_weight = loads.mean_weight[i] / dp;
    for (std::size_t j = 0; j < slots; ++j) {
      const double largest = loads.per_module[i][j].largest_item_tokens;
      const double rank_weight = std::max(loads.weight[i][j] / dp, module_forward_flops(m, largest, largest * largest));
      const double ratio = rank_weight / mean_rank_weight;
      t.fwd_s[j] += pass.fwd_s * ratio;
      t.bwd_s[j] += pass.bwd_s * ratio;
    }
  }
  return t;
}

namespace {
GroupOption option_from(const MultimodalSpec& model, const Cluster& cluster, const ModuleGroup& group,
                        const SlotLoads& loads, const ModulePlan& plan, std::int64_t inflight_slots,
                        const GroupSlotTimes& t) {
  GroupOption o;
  o.plan = plan;
  for (std::size_t j = 0; j < t.fwd_s.size(); ++j) o.busy_s += t.fwd_s[j] + t.bwd_s[j];
  if (!t.fwd_s.empty()) {
    o.first_fwd_s = t.fwd_s.front();
    o.last_bwd_s = t.bwd_s.back();
  }
  const double share = 1.0 / static_cast<double>(plan.dp);
  for (std::size_t i : group.members) {
    const ModuleSpec& m = model.modules[i];
    o.sync_s += module_grad_sync_s(m, cluster, plan);
    MemoryBreakdown mm = module_memory(m, plan, scaled(loads.heaviest[i], share * static_cast<double>(inflight_slots)),
                                       cluster.gpu);
    if (i != group.members.front()) mm.framework_bytes = 0;  // one reserve per GPU
    o.peak_memory_bytes += mm.total();
  }
  return o;
}
}  // namespace

GroupOption group_option(const MultimodalSpec& model, const Cluster& cluster, const ModuleGroup& group,
                         const SlotLoads& loads, const ModulePlan& plan, std::int64_t inflight_slots) {
  if (plan.gpus() == 0) return GroupOption{plan, 0, 0, 0, 0, 0};
  return option_from(model, cluster, group, loads, plan, inflight_slots,
                     group_slot_times(model, cluster, group, loads, plan));
}

std::vector<GroupOption> group_options(const MultimodalSpec& model, const Cluster& cluster, const ModuleGroup& group,
                                       const SlotLoads& loads, std::int64_t gpus, std::int64_t inflight_slots,
                                       double memory_limit_bytes, bool drop_dominated) {
  std::vector<GroupOption> options;
  std::vector<GroupSlotTimes> times;
  for (std::int64_t tp = 1; tp <= std::min(group.tp_limit, gpus); tp *= 2) {
    if (gpus % tp != 0) continue;
    bool heads_ok = true;
    for (std::size_t i : group.members) {
      const ModuleSpec& m = model.modules[i];
      if (m.role != ModuleRole::projector && m.transformer.heads % tp != 0) heads_ok = false;
    }
    if (!heads_ok) continue;
    for (Recompute rc : {Recompute::none, Recompute::full}) {
      const ModulePlan plan{tp, gpus / tp, rc};
      GroupSlotTimes t = group_slot_times(model, cluster, group, loads, plan);
      GroupOption o = option_from(model, cluster, group, loads, plan, inflight_slots, t);
      if (o.peak_memory_bytes > memory_limit_bytes) continue;
      options.push_back(o);
      times.push_back(std::move(t));
    }
  }
  if (!drop_dominated) return options;
  // a dominates b: no slower anywhere (ties broken by order, so equal options keep the first).
  auto dominates = [&](std::size_t a, std::size_t b) {
    if (options[a].sync_s > options[b].sync_s) return false;
    for (std::size_t j = 0; j < times[a].fwd_s.size(); ++j)
      if (times[a].fwd_s[j] > times[b].fwd_s[j] || times[a].bwd_s[j] > times[b].bwd_s[j]) return false;
    return true;
  };
  std::vector<GroupOption> kept;
  for (std::size_t b = 0; b < options.size(); ++b) {
    bool dominated = false;
    for (std::size_t a = 0; a < options.size() && !dominated; ++a)
      if (a != b && dominates(a, b) && (!dominates(b, a) || a < b)) dominated = true;
    if (!dominated) kept.push_back(options[b]);
  }
  return kept;
}

}  // namespace tessera
