#include "search/split_search.h"

#include <algorithm>
#include <limits>
#include <optional>

#include "cost/pipeline_runs.h"
#include "model/flops.h"

namespace tessera {

namespace {

// Backbone plans per GPU count re-scored with the simulator (the closed form ranks the rest).
constexpr std::size_t kBackboneRescored = 8;

// The k-th smallest of `times` (k = options.top_k); infinite while there are fewer, or exhaustive.
double kth_smallest(const std::vector<double>& times, const MultimodalOptions& options) {
  if (options.exhaustive || times.size() < options.top_k) return kInfinity;
  std::vector<double> sorted = times;
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(options.top_k - 1), sorted.end());
  return sorted[options.top_k - 1];
}

// The largest backbone count searched: groups with any work in this step need at least one GPU
// of their own.
std::int64_t max_backbone_gpus(const SplitRequest& r) {
  const std::int64_t gpus = r.cluster.gpus();
  std::int64_t busy_groups = 0;
  for (const auto& g : r.groups) {
    bool busy = false;
    for (const auto& q : r.sequences)
      for (std::size_t i : g.members) busy = busy || q.modules[i].tokens > 0;
    busy_groups += busy ? 1 : 0;
  }
  return std::min<std::int64_t>(r.options.max_backbone_gpus > 0 ? r.options.max_backbone_gpus : gpus,
                                gpus - busy_groups);
}

// The GPU's best sustained GEMM rate in any precision the backbone may run (compute_cost caps a
// GEMM at the peak times its efficiency: cost/compute_cost.cpp gemm_efficiency), FLOP/s.
double best_gemm_flops_per_s(const GpuSpec& gpu) {
  return std::max(gpu.peak_flops(false) * gpu.gemm_efficiency, gpu.peak_flops(true) * gpu.fp8_gemm_efficiency);
}

// The backbone's GEMM work per step (forward + 2x backward): at best_gemm_flops_per_s a lower
// bound of its step on any count.
double backbone_gemm_flops(const SplitRequest& r) {
  const ModelSpec& backbone = r.model.backbone().transformer;
  const std::int64_t seq_len = r.workload.seq_len;
  const ForwardFlopsPerToken per_token = forward_flops_per_token(backbone, seq_len, /*causal_span=*/true);
  return 3.0 * (per_token.attention_linear + per_token.mlp + per_token.logits) *
         static_cast<double>(r.workload.global_batch) * static_cast<double>(seq_len);
}

// Every group's options on each GPU count it could take of the `spare` ones (an idle group: one
// option on no GPU).
std::vector<std::vector<GroupOption>> group_options_beside(const SplitRequest& r, const BackboneCandidate& b,
                                                           std::int64_t spare) {
  std::vector<std::vector<GroupOption>> options;
  for (const auto& g : r.groups) {
    std::vector<GroupOption> list;
    if (group_is_idle(g, b.loads)) {
      list.push_back(group_option(r.model, r.cluster, g, b.loads, ModulePlan{1, 0, Recompute::none}, 0));
    } else {
      const std::int64_t inflight = g.before_backbone ? b.plan.pp + 2 : 1;  // 1F1B depth of its stage
      for (std::int64_t gpus_here = 1; gpus_here <= spare; ++gpus_here)
        for (const GroupOption& o : group_options(r.model, r.cluster, g, b.loads, gpus_here, inflight,
                                                  r.memory_limit_bytes, !r.options.exhaustive))
          list.push_back(o);
    }
    options.push_back(std::move(list));
  }
  return options;
}

// prefix[k][i]: group k's envelope over its options [0..i] (ascending GPUs).
std::vector<std::vector<GroupStage>> option_envelopes(const SplitRequest& r, const BackboneOptions& entry) {
  std::vector<std::vector<GroupStage>> prefix(r.groups.size());
  for (std::size_t k = 0; k < r.groups.size(); ++k)
    prefix[k] = prefix_envelopes(r.model, r.cluster, entry.backbone, r.groups[k], entry.options[k]);
  return prefix;
}

double simulated_step_s(const ExtendedPipeline& x) { return thread_pipeline_simulator().makespan(x.costs) + x.tail_s; }

// One simulation with every group at the envelope of all its options bounds every split of the count.
double envelope_bound_s(const SplitRequest& r, const BackboneOptions& entry,
                        const std::vector<std::vector<GroupStage>>& prefix) {
  const auto slots = static_cast<std::size_t>(entry.backbone.loads.slots);
  const GroupStage no_work{{std::vector<double>(slots, 0.0), std::vector<double>(slots, 0.0)}, 0.0, 0.0};
  std::vector<GroupStage> envelope;
  for (std::size_t k = 0; k < r.groups.size(); ++k) envelope.push_back(prefix[k].empty() ? no_work : prefix[k].back());
  return simulated_step_s(extended_pipeline(entry.backbone, r.groups, envelope));
}

// A bound per option of the first group: that option exactly, every other group at the envelope
// of its options that still fit beside it (one simulation each; infinite where none fits).
std::vector<double> first_option_bounds_s(const SplitRequest& r, const BackboneOptions& entry,
                                          const std::vector<std::vector<GroupStage>>& prefix, std::int64_t spare,
                                          std::int64_t& simulated) {
  const std::size_t G = r.groups.size();
  if (G == 0) return {};
  std::vector<double> bounds(entry.options[0].size(), kInfinity);
  const bool every_group_has_options =
      std::all_of(entry.options.begin(), entry.options.end(), [](const auto& list) { return !list.empty(); });
  if (!every_group_has_options) return bounds;
  std::int64_t others_need = 0;
  for (std::size_t k = 1; k < G; ++k) others_need += entry.options[k].front().gpus();
  for (std::size_t o = 0; o < entry.options[0].size(); ++o) {
    const GroupOption& first = entry.options[0][o];
    if (first.gpus() + others_need > spare) break;
    std::vector<GroupStage> stages{group_stage(r.model, r.cluster, entry.backbone, r.groups[0], first)};
    bool fits = true;
    for (std::size_t k = 1; k < G && fits; ++k) {
      // Options of group k that fit beside this one (and the others' smallest).
      const std::int64_t room = spare - first.gpus() - (others_need - entry.options[k].front().gpus());
      std::size_t last = 0;
      while (last < entry.options[k].size() && entry.options[k][last].gpus() <= room) ++last;
      if (last == 0) fits = false;
      else stages.push_back(prefix[k][last - 1]);
    }
    if (!fits) continue;
    bounds[o] = simulated_step_s(extended_pipeline(entry.backbone, r.groups, stages));
    ++simulated;
  }
  return bounds;
}

std::vector<const GroupOption*> option_pointers(const BackboneOptions& entry, const SplitCandidate& c) {
  std::vector<const GroupOption*> chosen(entry.options.size());
  for (std::size_t k = 0; k < chosen.size(); ++k) chosen[k] = &entry.options[k][c.option[k]];
  return chosen;
}

// Every combination of options for groups k.. whose GPUs fit in `left` (the rest idle), each
// entered with its lower bound; `c` and `chosen` hold the options of groups 0..k-1.
void add_splits(const SplitRequest& r, const BackboneOptions& here, std::size_t k, std::int64_t left,
                SplitCandidate& c, std::vector<const GroupOption*>& chosen, SplitSpace& space) {
  if (k == r.groups.size()) {
    c.lower_bound_s = std::max({here.envelope_bound_s, here.first_option_bound_s[c.option[0]],
                                disaggregated_lower_bound_s(r.model, r.cluster, here.backbone, r.groups, chosen)});
    ++space.evaluated;
    space.candidates.push_back(c);
    return;
  }
  for (std::size_t o = 0; o < here.options[k].size(); ++o) {
    const GroupOption& option = here.options[k][o];
    if (option.gpus() > left) break;  // ascending GPUs
    c.option[k] = static_cast<std::uint32_t>(o);
    chosen[k] = &option;
    add_splits(r, here, k + 1, left - option.gpus(), c, chosen, space);
  }
}

// The backbone's best plan on `gpus`, its options and bounds, and the splits they leave, when the
// bounds can beat `kth_upper_s`; returns the simulated time of its best-bound split (an upper
// bound on the count's best) when it adds any.
std::optional<double> add_backbone_count(const SplitRequest& r, std::int64_t gpus, double kth_upper_s, SplitSpace& space) {
  PlannerOptions planner;
  planner.top_k = 1;
  planner.rescored = kBackboneRescored;
  planner.threads = r.options.threads;
  const ModelSpec& backbone = r.model.backbone().transformer;
  const PlanSearch s = search_plans(backbone, sub_cluster(r.cluster, gpus), r.workload, backbone_count_space(), planner);
  if (s.plans.empty()) return std::nullopt;
  BackboneOptions entry;
  entry.backbone = backbone_candidate(r.model, r.cluster, gpus, s.plans.front().plan, r.workload, r.sequences);
  const BackboneCandidate& b = entry.backbone;
  if (space.best_alone_gpus == 0 || b.estimate.iteration_time_s < space.best_alone_s) {
    space.best_alone_s = b.estimate.iteration_time_s;
    space.best_alone_gpus = gpus;
  }
  if (b.stage_bound_s + b.inputs.tail_s - b.interleaving_saving_s >= kth_upper_s) return std::nullopt;
  const std::int64_t spare = r.cluster.gpus() - gpus;
  entry.options = group_options_beside(r, b, spare);
  const std::vector<std::vector<GroupStage>> prefix = option_envelopes(r, entry);
  entry.envelope_bound_s = envelope_bound_s(r, entry, prefix);
  ++space.simulated;
  if (entry.envelope_bound_s >= kth_upper_s) return std::nullopt;
  entry.first_option_bound_s = first_option_bounds_s(r, entry, prefix, spare, space.simulated);
  space.backbones.push_back(std::move(entry));
  const BackboneOptions& here = space.backbones.back();
  const std::size_t first_split = space.candidates.size();
  SplitCandidate c{0, static_cast<std::uint32_t>(space.backbones.size() - 1), {}};
  std::vector<const GroupOption*> chosen(r.groups.size());
  add_splits(r, here, 0, spare, c, chosen, space);
  const auto best = std::min_element(space.candidates.begin() + static_cast<std::ptrdiff_t>(first_split),
                                     space.candidates.end(), [](const SplitCandidate& x, const SplitCandidate& y) {
                                       return x.lower_bound_s < y.lower_bound_s;
                                     });
  if (best == space.candidates.end()) return std::nullopt;
  ++space.simulated;
  return split_time_s(r, here, *best);
}

// The split's plan: every module's placement, the GPUs it uses and leaves idle, its memory.
MultimodalPlan split_plan(const SplitRequest& r, const BackboneCandidate& b,
                          const std::vector<const GroupOption*>& chosen, double time_s) {
  MultimodalPlan p;
  p.disaggregated = true;
  p.backbone_plan = b.plan;
  p.backbone_gpus = b.gpus;
  p.iteration_time_s = time_s;
  p.gpus_used = b.gpus;
  p.peak_memory_bytes = b.estimate.peak_memory_bytes;
  for (const ModuleSpec& m : r.model.modules) {
    ModulePlacement pl;
    pl.name = m.name;
    pl.role = m.role;
    if (pl.role == ModuleRole::backbone) {
      pl.gpus = b.gpus;
      pl.busy_s = b.stage_busy_s;
      pl.peak_memory_bytes = b.estimate.peak_memory_bytes;
    }
    p.modules.push_back(pl);
  }
  for (std::size_t k = 0; k < r.groups.size(); ++k) {
    const GroupOption& o = *chosen[k];
    p.gpus_used += o.gpus();
    p.peak_memory_bytes = std::max(p.peak_memory_bytes, o.peak_memory_bytes);
    for (std::size_t i : r.groups[k].members) {
      ModulePlacement& pl = p.modules[i];
      pl.gpus = o.gpus();
      pl.plan = o.plan;
      pl.busy_s = o.busy_s;
      pl.peak_memory_bytes = o.peak_memory_bytes;
    }
  }
  p.gpus_idle = r.cluster.gpus() - p.gpus_used;
  p.fits = p.peak_memory_bytes <= r.memory_limit_bytes;
  return p;
}

// Faster, then fewer GPUs.
bool better_split(const MultimodalPlan& a, const MultimodalPlan& b) {
  return a.iteration_time_s < b.iteration_time_s ||
         (a.iteration_time_s == b.iteration_time_s && a.gpus_used < b.gpus_used);
}

}  // namespace

PlanConstraints backbone_count_space() {
  PlanConstraints fix;  // bf16 and FP8 (where the GPU has it), as a language model's plans
  fix.recompute_layers = 0;
  fix.zero_choices = {OptimizerSharding::zero1, OptimizerSharding::zero3};
  return fix;
}

SplitSpace split_candidates(const SplitRequest& r) {
  SplitSpace space;
  const std::int64_t step = r.options.backbone_gpu_step > 0 ? r.options.backbone_gpu_step : r.cluster.gpus_per_node;
  const double gemm_flops = backbone_gemm_flops(r);
  // Each count's best-bound split, simulated: a count whose lower bound passes the k-th smallest
  // of these cannot make the top k.
  std::vector<double> upper_bounds_s;
  for (std::int64_t gb = (max_backbone_gpus(r) / step) * step; gb >= step; gb -= step) {
    const double kth_upper_s = kth_smallest(upper_bounds_s, r.options);
    const double ideal_s = gemm_flops / (static_cast<double>(gb) * best_gemm_flops_per_s(r.cluster.gpu));
    if (ideal_s >= kth_upper_s) break;  // fewer GPUs are slower still
    if (const std::optional<double> upper_s = add_backbone_count(r, gb, kth_upper_s, space))
      upper_bounds_s.push_back(*upper_s);
  }
  return space;
}

double split_time_s(const SplitRequest& r, const BackboneOptions& backbone, const SplitCandidate& split) {
  return simulated_step_s(
      extended_pipeline(r.model, r.cluster, backbone.backbone, r.groups, option_pointers(backbone, split)));
}

std::vector<MultimodalPlan> best_splits(const SplitRequest& r, SplitSpace& space) {
  const MultimodalOptions& options = r.options;
  std::sort(space.candidates.begin(), space.candidates.end(),
            [](const SplitCandidate& a, const SplitCandidate& b) { return a.lower_bound_s < b.lower_bound_s; });
  std::vector<MultimodalPlan> found;  // one per backbone count, best first
  const auto kth_best_s = [&]() {
    if (options.exhaustive || found.size() < options.top_k) return kInfinity;
    return found[options.top_k - 1].iteration_time_s;
  };
  for (const SplitCandidate& cand : space.candidates) {
    if (cand.lower_bound_s >= kth_best_s()) break;
    const BackboneOptions& entry = space.backbones[cand.backbone];
    const BackboneCandidate& b = entry.backbone;
    const auto own =
        std::find_if(found.begin(), found.end(), [&](const MultimodalPlan& f) { return f.backbone_gpus == b.gpus; });
    if (!options.exhaustive && own != found.end() && cand.lower_bound_s >= own->iteration_time_s)
      continue;  // cannot improve its count
    const std::vector<const GroupOption*> chosen = option_pointers(entry, cand);
    const MultimodalPlan p =
        split_plan(r, b, chosen, simulated_step_s(extended_pipeline(r.model, r.cluster, b, r.groups, chosen)));
    ++space.simulated;
    if (own == found.end()) found.push_back(p);
    else if (better_split(p, *own)) *own = p;
    std::sort(found.begin(), found.end(), better_split);
    if (!options.exhaustive && found.size() > options.top_k) found.resize(options.top_k);
  }
  if (found.size() > options.top_k) found.resize(options.top_k);
  return found;
}

}  // namespace tessera
