#include "search/multimodal_planner.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <cmath>
#include <limits>

#include "core/checks.h"
#include "core/divisors.h"
#include "core/error.h"
#include "core/units.h"
#include "cost/collective_cost.h"
#include "cost/compute_cost.h"
#include "cost/cost_model.h"
#include "model/flops.h"
#include "search/planner.h"

namespace tessera {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Backbone plans re-evaluated with the modules folded in, for the monolithic baseline.
constexpr std::size_t kMonolithicCandidates = 16;
// Replicas simulated while ranking monolithic layouts (the heaviest by module work).
constexpr std::int64_t kMonolithicReplicasRanked = 4;
// Tensor parallelism tried for a module group (within a node).
constexpr std::int64_t kMaxModuleTp = 8;
constexpr std::int64_t kMaxGlobalBatch = 100'000'000;

// A module group of the disaggregated plan: an encoder with its projector (one per modality), or
// the generator. Its GPUs run every member on the same micro-batch slot, one after another.
struct ModuleGroup {
  std::vector<std::size_t> members;  // indices into model.modules
  bool before_backbone = true;       // encoders feed the backbone; the generator follows it
  std::int64_t tp_limit = 1;         // tp must divide every member's heads
};

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

// Per-slot loads of every module when the backbone runs dp replicas of micro-batch mb: replica r
// takes the r-th contiguous block of the global batch (Megatron's sampler), micro-batch j of it
// the j-th run of mb sequences; slot j gathers micro-batch j of every replica.
struct SlotLoads {
  std::int64_t slots = 0;
  std::vector<std::vector<ModuleLoad>> per_module;  // [module][slot], summed over replicas
  std::vector<ModuleLoad> heaviest;                 // [module] the heaviest slot's load
  std::vector<double> mean_weight;                  // [module] mean forward FLOPs per slot
  std::vector<ModuleLoad> mean;                     // [module] mean load per slot
  std::vector<std::vector<double>> weight;          // [module][slot] forward FLOPs
};

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
  s.per_module.assign(modules, std::vector<ModuleLoad>(static_cast<std::size_t>(s.slots)));
  for (std::int64_t r = 0; r < dp; ++r)
    for (std::int64_t j = 0; j < s.slots; ++j)
      for (std::int64_t k = 0; k < mb; ++k) {
        const PackedSequence& q = seqs[static_cast<std::size_t>(r * per_replica + j * mb + k)];
        for (std::size_t i = 0; i < modules; ++i) s.per_module[i][static_cast<std::size_t>(j)] += q.modules[i];
      }
  s.heaviest.assign(modules, ModuleLoad{});
  s.mean_weight.assign(modules, 0.0);
  s.mean.assign(modules, ModuleLoad{});
  s.weight.assign(modules, std::vector<double>(static_cast<std::size_t>(s.slots), 0.0));
  for (std::size_t i = 0; i < modules; ++i) {
    double top = -1;
    for (std::int64_t j = 0; j < s.slots; ++j) {
      const ModuleLoad& l = s.per_module[i][static_cast<std::size_t>(j)];
      const double w = load_weight(model.modules[i], l);
      s.weight[i][static_cast<std::size_t>(j)] = w;
      s.mean_weight[i] += w / static_cast<double>(s.slots);
      s.mean[i] += l;
      if (w > top) {
        top = w;
        s.heaviest[i] = l;
      }
    }
    const double largest = s.mean[i].largest_item_tokens;
    s.mean[i] = scaled(s.mean[i], 1.0 / static_cast<double>(std::max<std::int64_t>(1, s.slots)));
    s.mean[i].largest_item_tokens = largest;
  }
  return s;
}



// A module group's plan on G GPUs and what it costs per slot.
struct GroupChoice {
  bool valid = false;
  std::int64_t gpus = 0;  // GPUs it uses (<= the count it was offered)
  ModulePlan plan;
  double mean_slot_fwd_s = 0, mean_slot_bwd_s = 0;  // at the mean slot load, per member summed
  double sync_s = 0;
  double peak_memory_bytes = 0;
  double step_busy_s = 0;  // slots x mean slot time
};

// Each member's pass at the mean slot load, scaled per slot by the slot's forward FLOPs: a
// group's slot time is member-wise t_mean * w_j / w_mean (linear in work at these sizes).
struct GroupSlotTimes {
  std::vector<double> fwd_s, bwd_s;
};

// A group running `plan` (tp x dp GPUs): its mean slot time, gradient sync and peak memory.
GroupChoice group_choice(const MultimodalSpec& model, const Cluster& cluster, const ModuleGroup& group,
                         const SlotLoads& loads, const ModulePlan& plan, std::int64_t inflight_slots) {
  GroupChoice c;
  c.valid = true;
  c.gpus = plan.gpus();
  c.plan = plan;
  const double share = 1.0 / static_cast<double>(plan.dp);
  double memory = 0;
  for (std::size_t i : group.members) {
    const ModuleSpec& m = model.modules[i];
    const ModulePass pass = module_pass_time(m, cluster, plan, scaled(loads.mean[i], share));
    c.mean_slot_fwd_s += pass.fwd_s;
    c.mean_slot_bwd_s += pass.bwd_s;
    c.sync_s += module_grad_sync_s(m, cluster, plan);
    MemoryBreakdown mm = module_memory(m, plan, scaled(loads.heaviest[i], share * static_cast<double>(inflight_slots)));
    if (i != group.members.front()) mm.framework_bytes = 0;  // one reserve per GPU
    memory += mm.total();
  }
  c.peak_memory_bytes = memory;
  c.step_busy_s = static_cast<double>(loads.slots) * (c.mean_slot_fwd_s + c.mean_slot_bwd_s);
  return c;
}

GroupChoice best_group_plan(const MultimodalSpec& model, const Cluster& cluster, const ModuleGroup& group,
                            const SlotLoads& loads, std::int64_t gpus, std::int64_t inflight_slots,
                            double memory_limit_bytes) {
  GroupChoice best;
  for (std::int64_t tp = 1; tp <= std::min(group.tp_limit, gpus); tp *= 2) {
    if (gpus % tp != 0) continue;
    bool heads_ok = true;
    for (std::size_t i : group.members) {
      const ModuleSpec& m = model.modules[i];
      if (m.role != ModuleRole::projector && m.transformer.heads % tp != 0) heads_ok = false;
    }
    if (!heads_ok) continue;
    for (Recompute rc : {Recompute::none, Recompute::full}) {
      const GroupChoice c = group_choice(model, cluster, group, loads, ModulePlan{tp, gpus / tp, rc}, inflight_slots);
      if (c.peak_memory_bytes > memory_limit_bytes) continue;
      if (!best.valid || c.step_busy_s < best.step_busy_s ||
          (c.step_busy_s == best.step_busy_s && c.peak_memory_bytes < best.peak_memory_bytes))
        best = c;
    }
  }
  return best;
}

bool group_is_idle(const ModuleGroup& group, const SlotLoads& loads) {
  for (std::size_t i : group.members)
    if (loads.mean_weight[i] > 0) return false;
  return true;
}

// Table over GPU counts 0..max: the best choice using at most G GPUs (monotone by construction),
// or, with `exact`, using exactly G.
std::vector<GroupChoice> group_table(const MultimodalSpec& model, const Cluster& cluster, const ModuleGroup& group,
                                     const SlotLoads& loads, std::int64_t max_gpus, std::int64_t inflight_slots,
                                     double memory_limit_bytes, bool exact) {
  std::vector<GroupChoice> table(static_cast<std::size_t>(max_gpus + 1));
  if (group_is_idle(group, loads)) {
    // Nothing to run this step (a text-only mix for an image encoder): the group needs no GPUs.
    GroupChoice none;
    none.valid = true;
    none.plan = ModulePlan{1, 0, Recompute::none};
    std::fill(table.begin(), table.end(), none);
    return table;
  }
  for (std::int64_t g = 1; g <= max_gpus; ++g) {
    GroupChoice here = best_group_plan(model, cluster, group, loads, g, inflight_slots, memory_limit_bytes);
    const GroupChoice& fewer = table[static_cast<std::size_t>(g - 1)];
    table[static_cast<std::size_t>(g)] =
        exact || (here.valid && (!fewer.valid || here.step_busy_s < fewer.step_busy_s)) ? here : fewer;
  }
  return table;
}

// Per-slot times of one group choice.
GroupSlotTimes group_slot_times(const MultimodalSpec& model, const ModuleGroup& group, const SlotLoads& loads,
                                const GroupChoice& choice, const Cluster& cluster) {
  GroupSlotTimes t;
  t.fwd_s.assign(static_cast<std::size_t>(loads.slots), 0.0);
  t.bwd_s.assign(static_cast<std::size_t>(loads.slots), 0.0);
  const double share = 1.0 / static_cast<double>(choice.plan.dp);
  for (std::size_t i : group.members) {
    const ModuleSpec& m = model.modules[i];
    if (loads.mean_weight[i] <= 0) continue;
    const ModulePass pass = module_pass_time(m, cluster, choice.plan, scaled(loads.mean[i], share));
    const double dp = static_cast<double>(choice.plan.dp);
    for (std::int64_t j = 0; j < loads.slots; ++j) {
      // The busiest rank holds at least an even share and at least the slot's largest item
      // (items are spread over the group's ranks whole, e.g. by longest-processing-time first).
      const double largest = loads.per_module[i][static_cast<std::size_t>(j)].largest_item_tokens;
      const double rank_weight = std::max(loads.weight[i][static_cast<std::size_t>(j)] / dp,
                                          module_forward_flops(m, largest, largest * largest));
      const double ratio = rank_weight / (loads.mean_weight[i] / dp);
      t.fwd_s[static_cast<std::size_t>(j)] += pass.fwd_s * ratio;
      t.bwd_s[static_cast<std::size_t>(j)] += pass.bwd_s * ratio;
    }
  }
  return t;
}

// A backbone candidate: its plan on G GPUs, the simulator inputs, and the slot loads it implies.
struct BackboneCandidate {
  std::int64_t gpus = 0;
  Plan plan;
  Estimate estimate;
  PipelineInputs inputs;
  SlotLoads loads;
  double stage_busy_s = 0;  // busiest backbone stage's work per step
  double pipeline_lower_bound_s = 0;  // no schedule of the backbone's stages is faster
  std::vector<std::vector<GroupChoice>> tables;  // [group][G]: best with at most G GPUs
};

Cluster sub_cluster(const Cluster& cluster, std::int64_t gpus) {
  Cluster c = cluster;
  c.nodes = gpus / cluster.gpus_per_node;
  if (c.nodes * cluster.gpus_per_node != gpus) {  // a partial node: one node of that many GPUs
    c.nodes = 1;
    c.gpus_per_node = gpus;
  }
  return c;
}

// Cross-group transfer per slot: the slot's activations (backbone width, 16-bit) move between the
// groups through the NICs of the smaller group.
double cross_group_s(double tokens, std::int64_t hidden, std::int64_t gpus_a, std::int64_t gpus_b, const Cluster& cluster) {
  if (tokens <= 0) return 0.0;
  const double bytes = units::kBytesBf16 * tokens * static_cast<double>(hidden);
  const double links = static_cast<double>(std::max<std::int64_t>(1, std::min(gpus_a, gpus_b)));
  return cluster.inter_node.latency_s + bytes / (links * cluster.inter_node.bandwidth_bytes_per_s);
}

// The extended pipeline of a disaggregated plan: [encoder groups] + backbone stages + [generator].
struct Extended {
  PipelineCosts costs;
  double tail_s = 0;
};

Extended extended_pipeline(const MultimodalSpec& model, const Cluster& cluster, const BackboneCandidate& b,
                           const std::vector<ModuleGroup>& groups, const std::vector<GroupChoice>& choice) {
  Extended x;
  const PipelineCosts& bc = b.inputs.costs;
  const std::int64_t m = bc.microbatches;
  const bool has_pre = std::any_of(groups.begin(), groups.end(), [](const ModuleGroup& g) { return g.before_backbone; });
  const bool has_post = std::any_of(groups.begin(), groups.end(), [](const ModuleGroup& g) { return !g.before_backbone; });
  const int pre = has_pre ? 1 : 0, post = has_post ? 1 : 0;
  PipelineCosts& c = x.costs;
  c.schedule = Schedule::one_f_one_b;
  c.stages = bc.stages + pre + post;
  c.microbatches = static_cast<int>(m);
  c.chunks = 1;
  const auto slots = static_cast<std::size_t>(m);
  c.forward_s.assign(static_cast<std::size_t>(c.stages) * slots, 0.0);
  c.backward_s.assign(static_cast<std::size_t>(c.stages) * slots, 0.0);
  c.weight_s.clear();
  c.p2p_s.assign(static_cast<std::size_t>(c.stages), 0.0);
  c.dp_sync_s.assign(static_cast<std::size_t>(c.stages), 0.0);
  c.dp_sync_overlap = bc.dp_sync_overlap;
  for (int s = 0; s < bc.stages; ++s) {
    const std::size_t from = static_cast<std::size_t>(s) * slots, to = static_cast<std::size_t>(s + pre) * slots;
    std::copy_n(bc.forward_s.begin() + static_cast<std::ptrdiff_t>(from), slots, c.forward_s.begin() + static_cast<std::ptrdiff_t>(to));
    std::copy_n(bc.backward_s.begin() + static_cast<std::ptrdiff_t>(from), slots, c.backward_s.begin() + static_cast<std::ptrdiff_t>(to));
    if (s + 1 < bc.stages) c.p2p_s[static_cast<std::size_t>(s + pre)] = bc.p2p_s[static_cast<std::size_t>(s)];
    c.dp_sync_s[static_cast<std::size_t>(s + pre)] = bc.dp_sync_s[static_cast<std::size_t>(s)];
  }
  const std::int64_t hidden = model.backbone().transformer.hidden;
  const std::int64_t stage_gpus = b.plan.tp * b.plan.cp * b.plan.dp;
  double pre_sync = 0, post_sync = 0, pre_p2p = 0, post_p2p = 0;
  for (std::size_t gi = 0; gi < groups.size(); ++gi) {
    const ModuleGroup& g = groups[gi];
    const GroupSlotTimes t = group_slot_times(model, g, b.loads, choice[gi], cluster);
    const std::size_t stage = g.before_backbone ? 0 : static_cast<std::size_t>(c.stages - 1);
    for (std::size_t j = 0; j < slots; ++j) {
      // Encoder groups of different modalities run side by side: the slot waits for the slowest.
      c.forward_s[stage * slots + j] = std::max(c.forward_s[stage * slots + j], t.fwd_s[j]);
      c.backward_s[stage * slots + j] = std::max(c.backward_s[stage * slots + j], t.bwd_s[j]);
    }
    // What crosses: the projected media tokens (encoders) or the generator's conditioning, one
    // backbone-width vector per latent token, for the mean slot.
    double tokens = 0;
    for (std::size_t i : g.members) {
      const ModuleSpec& mod = model.modules[i];
      if (mod.role == ModuleRole::projector || mod.role == ModuleRole::generator)
        tokens += b.loads.mean[i].tokens;
    }
    const double p2p = cross_group_s(tokens, hidden, choice[gi].gpus, stage_gpus, cluster);
    (g.before_backbone ? pre_p2p : post_p2p) = std::max(g.before_backbone ? pre_p2p : post_p2p, p2p);
    (g.before_backbone ? pre_sync : post_sync) = std::max(g.before_backbone ? pre_sync : post_sync, choice[gi].sync_s);
  }
  if (has_pre) {
    c.p2p_s[0] = pre_p2p;
    c.dp_sync_s[0] = pre_sync;
  }
  if (has_post) {
    c.p2p_s[static_cast<std::size_t>(c.stages - 2)] = post_p2p;
    c.dp_sync_s[static_cast<std::size_t>(c.stages - 1)] = post_sync;
  }
  c.p2p_s[static_cast<std::size_t>(c.stages - 1)] = 0.0;  // no wrap without interleaving
  x.tail_s = b.inputs.tail_s;
  return x;
}

double model_flops_per_step(const MultimodalSpec& model, const std::vector<PackedSequence>& seqs, std::int64_t seq_len) {
  std::vector<ModuleLoad> total(model.modules.size());
  for (const auto& q : seqs)
    for (std::size_t i = 0; i < total.size(); ++i) total[i] += q.modules[i];
  double flops = 0;
  for (std::size_t i = 0; i < total.size(); ++i) {
    const ModuleSpec& m = model.modules[i];
    if (m.role == ModuleRole::backbone)
      flops += iteration_flops(m.transformer, total[i].tokens, seq_len, Recompute::none).model();
    else  // forward + backward (2x forward), Megatron-Core convention; a frozen module runs forward only
      flops += (m.trainable ? 3.0 : 1.0) * module_forward_flops(m, total[i].tokens, total[i].tokens_squared);
  }
  return flops;
}

void fill_rates(MultimodalPlan& p, const Cluster& cluster, double flops, double tokens, std::int64_t samples) {
  p.model_flops = flops;
  p.mfu = flops / (p.iteration_time_s * static_cast<double>(cluster.gpus()) * cluster.gpu.peak_flops(false));
  p.tokens_per_s = tokens / p.iteration_time_s;
  p.samples_per_s = static_cast<double>(samples) / p.iteration_time_s;
}

PipelineSimulator& simulator() {
  thread_local PipelineSimulator sim;
  return sim;
}

// The monolithic plan for one backbone layout: encoders and projectors on virtual stage 0, the
// generator on the last, each replica simulated with its own micro-batches. Only the
// `max_replicas` replicas with the most module work are simulated (all of them when 0): the
// slowest replica sets the step, and it is almost always among the heaviest.
MultimodalPlan monolithic_plan(const MultimodalSpec& model, const Cluster& cluster, const std::vector<PackedSequence>& seqs,
                               const Plan& plan, const Workload& w, double memory_limit_bytes, Recompute module_recompute,
                               std::int64_t max_replicas) {
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
        if (mod.role == ModuleRole::backbone) continue;
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
    if (mod.role == ModuleRole::backbone) continue;
    const std::size_t s = mod.role == ModuleRole::generator ? static_cast<std::size_t>(plan.pp - 1) : 0;
    costs.dp_sync_s[s] += module_grad_sync_s(mod, cluster, module_plan);
  }
  double worst = 0;
  std::vector<double> busy(modules, 0.0);
  // The backbone's own host dispatch per virtual stage (its layers' operators).
  const LayerSplit split = split_layers(plan, model.backbone().transformer.layers);
  const double host_layer_fwd_s = kHostOpsPerLayerForward * kHostOpDispatchS;
  std::vector<double> backbone_host_fwd(static_cast<std::size_t>(virtual_stages)), backbone_host_bwd(static_cast<std::size_t>(virtual_stages));
  for (std::int64_t k = 0; k < virtual_stages; ++k) {
    const auto layers = static_cast<double>(split.virtual_stage_layers(k));
    const auto recomputed = static_cast<double>(plan.recomputed_layers(split.virtual_stage_layers(k)));
    backbone_host_fwd[static_cast<std::size_t>(k)] = layers * host_layer_fwd_s;
    backbone_host_bwd[static_cast<std::size_t>(k)] =
        layers * kHostBackwardOverForward * host_layer_fwd_s + (plan.recompute == Recompute::full ? recomputed * host_layer_fwd_s : 0.0);
  }
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
        if (mod.role == ModuleRole::backbone) continue;
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
    worst = std::max(worst, simulator().makespan(costs));
  }
  out.iteration_time_s = worst + inputs.tail_s;
  // Memory: the backbone's stage plus the modules on stage 0 (pp micro-batches in flight under
  // 1F1B) or the last stage (one). The backbone's own peak may sit on another stage.
  double stage0 = e.memory.total(), last = e.memory.total();
  for (std::size_t i = 0; i < modules; ++i) {
    const ModuleSpec& mod = model.modules[i];
    if (mod.role == ModuleRole::backbone) continue;
    const double inflight = mod.role == ModuleRole::generator ? 1.0 : static_cast<double>(plan.pp);
    MemoryBreakdown mm = module_memory(mod, module_plan, scaled(heaviest[i], cp_share * inflight));
    mm.framework_bytes = 0;  // the backbone's reserve covers the GPU
    (mod.role == ModuleRole::generator ? last : stage0) += mm.total();
  }
  out.peak_memory_bytes = std::max(stage0, last);
  out.fits = out.peak_memory_bytes <= memory_limit_bytes;
  for (std::size_t i = 0; i < modules; ++i) {
    const ModuleSpec& mod = model.modules[i];
    ModulePlacement pl;
    pl.name = mod.name;
    pl.role = mod.role;
    pl.gpus = mod.role == ModuleRole::backbone ? plan.gpus() : plan.tp * plan.cp * plan.dp;
    pl.plan = module_plan;
    pl.busy_s = mod.role == ModuleRole::backbone ? e.time.compute_s : busy[i];
    pl.peak_memory_bytes = mod.role == ModuleRole::backbone ? e.peak_memory_bytes : 0.0;
    out.modules.push_back(pl);
  }
  return out;
}

// Layouts the monolithic baseline tries for one backbone plan: the plan itself, and (plain 1F1B)
// the same plan with a lighter first stage, Megatron's --decoder-first-pipeline-num-layers, which
// leaves room for the encoders there.
std::vector<Plan> monolithic_layouts(const Plan& plan, std::int64_t layers) {
  std::vector<Plan> out{plan};
  if (plan.pp < 2 || plan.vpp != 1 || plan.first_stage_layers != 0 || plan.last_stage_layers != 0) return out;
  for (std::int64_t first = (layers + plan.pp - 1) / plan.pp; first >= 1; --first) {
    const std::int64_t rest = layers - first;
    if (rest % (plan.pp - 1) != 0 || rest / (plan.pp - 1) <= first) continue;
    Plan p = plan;
    p.first_stage_layers = first;
    out.push_back(p);
  }
  return out;
}

}  // namespace

MultimodalSearch search_multimodal_plans(const MultimodalSpec& model, const Cluster& cluster, const DataMix& mix,
                                         std::int64_t global_batch, const MultimodalOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  model.validate();
  cluster.validate();
  mix.validate();
  require_positive("gbs", global_batch, kMaxGlobalBatch);
  MultimodalSearch out;
  const ModelSpec& backbone = model.backbone().transformer;
  const std::int64_t seq_len = mix.sequence_tokens;
  if (seq_len > backbone.max_context)
    throw Error("data.sequence_tokens", std::to_string(seq_len) + " exceeds the backbone's context " +
                                            std::to_string(backbone.max_context),
                "at most " + std::to_string(backbone.max_context));
  const Workload w{global_batch, seq_len};
  const std::vector<PackedSequence> seqs = pack_sequences(model, mix, global_batch, options.seed);
  out.sequences = global_batch;
  double backbone_tokens_total = 0, media_tokens = 0;
  const std::size_t bi = model.backbone_index();
  for (const auto& q : seqs) {
    out.samples += q.samples;
    backbone_tokens_total += q.modules[bi].tokens;
    for (std::size_t i = 0; i < model.modules.size(); ++i)
      if (model.modules[i].role == ModuleRole::projector) media_tokens += q.modules[i].tokens;
  }
  out.media_token_fraction = backbone_tokens_total > 0 ? media_tokens / backbone_tokens_total : 0.0;
  const double flops = model_flops_per_step(model, seqs, seq_len);
  const double memory_limit = cluster.gpu.usable_memory_gib * units::kGiB;
  const std::int64_t N = cluster.gpus();

  // The backbone alone on every GPU, text only: the reference MFU, and the monolithic layouts.
  PlannerOptions po;
  po.top_k = kMonolithicCandidates;
  po.threads = options.threads;
  const PlanSearch whole = search_plans(backbone, cluster, w, {}, po);
  if (!whole.plans.empty()) out.backbone_only_mfu = whole.plans.front().estimate.mfu;
  // Monolithic: each candidate layout (and its lighter-first-stage variants) with the modules
  // with or without recompute, ranked on the heaviest replicas, the winner re-run on all of them.
  Recompute best_module_recompute = Recompute::none;
  for (const auto& cand : whole.plans)
    for (const Plan& layout : monolithic_layouts(cand.plan, backbone.layers)) {
      try {
        validate_plan(layout, backbone, cluster, w);
      } catch (const Error&) {
        continue;
      }
      for (Recompute module_recompute : {Recompute::none, Recompute::full}) {
        MultimodalPlan mono = monolithic_plan(model, cluster, seqs, layout, w, memory_limit, module_recompute,
                                              kMonolithicReplicasRanked);
        ++out.simulated;
        if (!mono.fits) continue;
        if (!out.monolithic_found || mono.iteration_time_s < out.monolithic.iteration_time_s) {
          out.monolithic = mono;
          out.monolithic_found = true;
          best_module_recompute = module_recompute;
        }
      }
    }
  if (out.monolithic_found) {
    out.monolithic = monolithic_plan(model, cluster, seqs, out.monolithic.backbone_plan, w, memory_limit,
                                     best_module_recompute, 0);
    fill_rates(out.monolithic, cluster, flops, backbone_tokens_total, out.samples);
  }

  // Disaggregated: backbone candidates on whole nodes, module groups on the rest.
  const std::vector<ModuleGroup> groups = module_groups(model, cluster.gpus_per_node);
  const std::int64_t step = options.backbone_gpu_step > 0 ? options.backbone_gpu_step : cluster.gpus_per_node;
  // Groups with any work in this step need at least one GPU of their own.
  std::int64_t busy_groups = 0;
  for (const auto& g : groups) {
    bool busy = false;
    for (const auto& q : seqs)
      for (std::size_t i : g.members) busy = busy || q.modules[i].tokens > 0;
    busy_groups += busy ? 1 : 0;
  }
  const std::int64_t max_backbone =
      std::min<std::int64_t>(options.max_backbone_gpus > 0 ? options.max_backbone_gpus : N, N - busy_groups);
  PlanConstraints fix;
  fix.vpp = 1;  // the extended pipeline is plain 1F1B
  fix.recompute_layers = 0;
  PlannerOptions bo;
  bo.top_k = 1;
  bo.rescored = 1;
  bo.threads = options.threads;
  // Lower bound of a backbone step on G GPUs: its GEMMs (forward + 2x backward) at the dense
  // peak; no plan on fewer GPUs beats the best time already found once this bound passes it.
  const ForwardFlopsPerToken per_token = forward_flops_per_token(backbone, seq_len, /*causal_span=*/true);
  const double backbone_gemm_flops = 3.0 * (per_token.attention_linear + per_token.mlp + per_token.logits) *
                                     static_cast<double>(global_batch) * static_cast<double>(seq_len);
  struct Candidate {
    double lower_bound_s;
    std::size_t backbone;
    std::vector<std::int64_t> gpus;  // per group
  };
  std::vector<BackboneCandidate> backbones;
  auto choices_of = [](const BackboneCandidate& b, const std::vector<std::int64_t>& counts) {
    std::vector<GroupChoice> choice;
    for (std::size_t k = 0; k < counts.size(); ++k) choice.push_back(b.tables[k][static_cast<std::size_t>(counts[k])]);
    return choice;
  };
  std::vector<Candidate> candidates;
  // Simulated time of each backbone count's best-bound split: an upper bound on that count's best
  // plan. A count whose lower bound passes the k-th smallest of these cannot make the top k.
  std::vector<double> upper_bounds;
  auto kth_upper_bound = [&]() {
    if (upper_bounds.size() < options.top_k) return kInfinity;
    std::vector<double> sorted = upper_bounds;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(options.top_k - 1), sorted.end());
    return sorted[options.top_k - 1];
  };
  std::vector<std::int64_t> gpus(groups.size());
  for (std::int64_t gb = (max_backbone / step) * step; gb >= step; gb -= step) {
    const double ideal_s = backbone_gemm_flops / (static_cast<double>(gb) * cluster.gpu.peak_flops(false));
    if (!options.exhaustive && ideal_s >= kth_upper_bound()) break;  // fewer GPUs are slower still
    const Cluster sub = sub_cluster(cluster, gb);
    const PlanSearch s = search_plans(backbone, sub, w, fix, bo);
    if (s.plans.empty()) continue;
    BackboneCandidate b;
    b.gpus = gb;
    b.plan = s.plans.front().plan;
    b.estimate = estimate_with_pipeline_inputs(backbone, sub, b.plan, w, b.inputs);
    b.loads = slot_loads(model, seqs, b.plan.dp, b.plan.micro_batch);
    // Lower bound of any schedule of these stages: stage s cannot start before micro-batch 0's
    // forward has crossed the stages before it, nor finish before the last backward has crossed
    // them back; in between it runs all its work.
    const PipelineCosts& bc = b.inputs.costs;
    const auto slots = static_cast<std::size_t>(bc.microbatches);
    double head = 0, tail = 0;
    for (int st = 0; st < bc.stages; ++st) {
      const std::size_t first = static_cast<std::size_t>(st) * slots, last = first + slots - 1;
      double busy = 0;
      for (std::size_t j = 0; j < slots; ++j) busy += bc.forward_s[first + j] + bc.backward_s[first + j];
      b.stage_busy_s = std::max(b.stage_busy_s, busy);
      b.pipeline_lower_bound_s = std::max(b.pipeline_lower_bound_s, head + busy + tail);
      const double p2p = st + 1 < bc.stages ? bc.p2p_s[static_cast<std::size_t>(st)] : 0.0;
      head += bc.forward_s[first] + p2p;
      tail += bc.backward_s[last] + p2p;
    }
    if (!options.exhaustive && b.pipeline_lower_bound_s + b.inputs.tail_s >= kth_upper_bound()) continue;
    const std::int64_t spare = N - gb;
    const std::int64_t inflight_pre = b.plan.pp + 2;  // the first stage of the extended 1F1B
    for (const auto& g : groups)
      b.tables.push_back(group_table(model, cluster, g, b.loads, spare, g.before_backbone ? inflight_pre : 1, memory_limit,
                                     options.exhaustive));
    backbones.push_back(std::move(b));
    const BackboneCandidate& bb = backbones.back();
    const std::size_t first_candidate = candidates.size();
    // Enumerate splits: every group but the last takes 1.. of the spare GPUs, the last the rest
    // (tables hold the best plan with at most that many GPUs, so the rest may stay idle).
    const std::size_t G = groups.size();
    // Groups with work need a GPU; idle ones may have none. needed_after[k]: GPUs the groups
    // after k need at least.
    std::vector<std::int64_t> min_gpus(G), needed_after(G, 0);
    for (std::size_t k = 0; k < G; ++k) min_gpus[k] = group_is_idle(groups[k], bb.loads) ? 0 : 1;
    for (std::size_t k = G; k-- > 1;) needed_after[k - 1] = needed_after[k] + min_gpus[k];
    std::function<void(std::size_t, std::int64_t)> split = [&](std::size_t gi, std::int64_t left) {
      if (G == 0 || (gi + 1 == G && !options.exhaustive) || gi == G) {
        if (G > 0 && gi + 1 == G) gpus[gi] = left;
        double bound = bb.pipeline_lower_bound_s;
        for (std::size_t k = 0; k < G; ++k) {
          const GroupChoice& c = bb.tables[k][static_cast<std::size_t>(gpus[k])];
          if (!c.valid) return;
          bound = std::max(bound, c.step_busy_s);
        }
        ++out.evaluated;
        candidates.push_back({bound + bb.inputs.tail_s, backbones.size() - 1, gpus});
        return;
      }
      // Exhaustively, every group takes 1.. of what is left (the rest idle); otherwise the last
      // group's table entry for all that is left already holds its best with at most that many.
      for (std::int64_t g = min_gpus[gi]; g <= left - needed_after[gi]; ++g) {
        gpus[gi] = g;
        split(gi + 1, left - g);
      }
    };
    if (spare >= (G > 0 ? needed_after[0] + min_gpus[0] : 0)) split(0, spare);
    // Simulate this count's best-bound split now: its time bounds what fewer GPUs must beat.
    std::size_t best_here = candidates.size();
    for (std::size_t k = first_candidate; k < candidates.size(); ++k)
      if (best_here == candidates.size() || candidates[k].lower_bound_s < candidates[best_here].lower_bound_s)
        best_here = k;
    if (best_here < candidates.size()) {
      const Extended x = extended_pipeline(model, cluster, bb, groups, choices_of(bb, candidates[best_here].gpus));
      upper_bounds.push_back(simulator().makespan(x.costs) + x.tail_s);
      ++out.simulated;
    }
  }

  // Branch and bound: simulate in order of lower bound until the bound passes the k-th best time.
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.lower_bound_s < b.lower_bound_s; });
  // Results are distinct backbone counts (the best split of each), best first.
  std::vector<MultimodalPlan> found;
  auto kth_best = [&]() {
    if (found.size() < options.top_k) return kInfinity;
    return found[options.top_k - 1].iteration_time_s;
  };
  for (const Candidate& cand : candidates) {
    if (!options.exhaustive && cand.lower_bound_s >= kth_best()) break;
    const BackboneCandidate& b = backbones[cand.backbone];
    const auto own = std::find_if(found.begin(), found.end(), [&](const MultimodalPlan& f) { return f.backbone_gpus == b.gpus; });
    if (!options.exhaustive && own != found.end() && cand.lower_bound_s >= own->iteration_time_s)
      continue;  // cannot improve its count
    const std::vector<GroupChoice> choice = choices_of(b, cand.gpus);
    const Extended x = extended_pipeline(model, cluster, b, groups, choice);
    ++out.simulated;
    MultimodalPlan p;
    p.disaggregated = true;
    p.backbone_plan = b.plan;
    p.backbone_gpus = b.gpus;
    p.iteration_time_s = simulator().makespan(x.costs) + x.tail_s;
    p.gpus_used = b.gpus;
    p.peak_memory_bytes = b.estimate.peak_memory_bytes;
    for (std::size_t i = 0; i < model.modules.size(); ++i) {
      ModulePlacement pl;
      pl.name = model.modules[i].name;
      pl.role = model.modules[i].role;
      if (pl.role == ModuleRole::backbone) {
        pl.gpus = b.gpus;
        pl.busy_s = b.stage_busy_s;
        pl.peak_memory_bytes = b.estimate.peak_memory_bytes;
      }
      p.modules.push_back(pl);
    }
    for (std::size_t k = 0; k < groups.size(); ++k) {
      p.gpus_used += choice[k].gpus;
      p.peak_memory_bytes = std::max(p.peak_memory_bytes, choice[k].peak_memory_bytes);
      for (std::size_t i : groups[k].members) {
        ModulePlacement& pl = p.modules[i];
        pl.gpus = choice[k].gpus;
        pl.plan = choice[k].plan;
        pl.busy_s = choice[k].step_busy_s;
        pl.peak_memory_bytes = choice[k].peak_memory_bytes;
      }
    }
    p.gpus_idle = N - p.gpus_used;
    p.fits = p.peak_memory_bytes <= memory_limit;
    fill_rates(p, cluster, flops, backbone_tokens_total, out.samples);
    auto same = std::find_if(found.begin(), found.end(), [&](const MultimodalPlan& f) { return f.backbone_gpus == p.backbone_gpus; });
    if (same == found.end()) found.push_back(p);
    else if (p.iteration_time_s < same->iteration_time_s ||
             (p.iteration_time_s == same->iteration_time_s && p.gpus_used < same->gpus_used))
      *same = p;
    std::sort(found.begin(), found.end(), [](const MultimodalPlan& a, const MultimodalPlan& b) {
      return a.iteration_time_s < b.iteration_time_s ||
             (a.iteration_time_s == b.iteration_time_s && a.gpus_used < b.gpus_used);
    });
    if (found.size() > options.top_k) found.resize(options.top_k);
  }
  out.plans = std::move(found);
  out.search_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

Timeline disaggregated_timeline(const MultimodalSpec& model, const Cluster& cluster, const DataMix& mix,
                                std::int64_t global_batch, const MultimodalPlan& plan, std::uint64_t seed) {
  if (!plan.disaggregated) throw Error("trace", "the plan is not disaggregated", "a disaggregated plan");
  const ModelSpec& backbone = model.backbone().transformer;
  const Workload w{global_batch, mix.sequence_tokens};
  const std::vector<PackedSequence> seqs = pack_sequences(model, mix, global_batch, seed);
  BackboneCandidate b;
  b.gpus = plan.backbone_gpus;
  b.plan = plan.backbone_plan;
  b.estimate = estimate_with_pipeline_inputs(backbone, sub_cluster(cluster, b.gpus), b.plan, w, b.inputs);
  b.loads = slot_loads(model, seqs, b.plan.dp, b.plan.micro_batch);
  const std::vector<ModuleGroup> groups = module_groups(model, cluster.gpus_per_node);
  std::vector<GroupChoice> choice;
  for (const auto& g : groups)
    choice.push_back(group_choice(model, cluster, g, b.loads, plan.modules[g.members.front()].plan,
                                  g.before_backbone ? b.plan.pp + 2 : 1));
  const Extended x = extended_pipeline(model, cluster, b, groups, choice);
  return simulator().run(x.costs);
}

}  // namespace tessera
