#include "search/multimodal_planner.h"

#include <algorithm>
#include <array>
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
#include "cost/pipeline_runs.h"
#include "model/flops.h"
#include "search/colocated_plan.h"
#include "search/disaggregated_pipeline.h"
#include "search/module_group.h"
#include "search/monolithic_plan.h"
#include "search/planner.h"

namespace tessera {

namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Backbone plans re-evaluated with the modules folded in, for the monolithic baseline.
constexpr std::size_t kMonolithicCandidates = 16;
// Replicas simulated while ranking monolithic layouts (the heaviest by module work).
constexpr std::int64_t kMonolithicReplicasRanked = 4;
// The split search's work grows with the GPUs the groups may take (options per GPU count, their
// combinations, one search per backbone count): beyond this cluster size a request is refused up
// front rather than run for minutes (issue 13: every accepted input finishes in <= 10 s). Measured
// (mllm-72b-gen, caption-like, gbs 1920, CPU time over all threads): 8,192 GPUs 7.9 s, 16,384
// GPUs 27.6 s, 100,000 GPUs minutes.
constexpr std::int64_t kMaxMultimodalGpus = 8'192;
// The work also grows with the batch (sequences packed, slot loads per backbone count): the
// product is bounded as well. Measured as above: 1,920 x 8,192 GPUs 7.9 s, 19,200 x 1,296 GPUs
// 10.6 s, 10^8 x 1,296 GPUs past 100 s.
constexpr std::int64_t kMaxBatchTimesGpus = 16'000'000;
// Backbone plans per GPU count re-scored with the simulator (the closed form ranks the rest).
constexpr std::size_t kBackboneRescored = 8;
// Module groups a model may have (encoders per modality + a generator).
constexpr std::size_t kMaxGroups = 4;

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

// The recompute a monolithic plan runs its modules with (one for all of them).
Recompute module_recompute_of(const MultimodalPlan& monolithic) {
  for (const auto& m : monolithic.modules)
    if (m.role != ModuleRole::backbone) return m.plan.recompute;
  return Recompute::none;
}

}  // namespace

MultimodalSearch search_multimodal_plans(const MultimodalSpec& model, const Cluster& cluster, const DataMix& mix,
                                         std::int64_t global_batch, const MultimodalOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  model.validate();
  cluster.validate();
  if (cluster.gpus() > kMaxMultimodalGpus)
    throw Error("cluster", std::to_string(cluster.gpus()) + " GPUs is too many for the multimodal split search",
                "at most " + std::to_string(kMaxMultimodalGpus) + " GPUs for a multimodal model");
  mix.validate();
  require_positive("gbs", global_batch, kMaxGlobalBatch);
  if (global_batch > kMaxBatchTimesGpus / cluster.gpus())
    throw Error("gbs",
                std::to_string(global_batch) + " sequences on " + std::to_string(cluster.gpus()) +
                    " GPUs is too much work for the multimodal split search",
                "gbs x GPUs <= " + std::to_string(kMaxBatchTimesGpus) + " (at most " +
                    std::to_string(kMaxBatchTimesGpus / cluster.gpus()) + " here)");
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
  // The planner's memory limit (usable memory less its default headroom), for modules and backbone alike.
  const double memory_limit = tessera::memory_limit(cluster, PlanConstraints{}).limit_bytes;
  const std::int64_t N = cluster.gpus();

  // Disaggregated: backbone candidates on whole nodes, module groups on the rest.
  const std::vector<ModuleGroup> groups = module_groups(model, cluster.gpus_per_node);
  const std::size_t G = groups.size();
  if (G > kMaxGroups) throw Error("model.modules", std::to_string(G) + " module groups", "at most " + std::to_string(kMaxGroups));
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
  // The backbone per count: full recompute of all layers or none (no partial), and the sharded
  // optimizers only (the unsharded one holds more memory for the same traffic), to keep the search
  // of ~70 counts inside a second.
  // bf16 only: the lower bounds below assume the 16-bit GEMM peak.
  PlanConstraints fix;
  fix.precision_choices = {Precision::bf16};
  fix.recompute_layers = 0;
  fix.zero_choices = {OptimizerSharding::zero1, OptimizerSharding::zero3};
  PlannerOptions bo;
  bo.top_k = 1;
  bo.rescored = kBackboneRescored;
  bo.threads = options.threads;
  // Lower bound of a backbone step on G GPUs: its GEMMs (forward + 2x backward) at the GPU's best
  // sustained GEMM rate (compute_cost never runs a GEMM faster); no plan on fewer GPUs beats the
  // k-th best time already found once this bound passes it.
  const ForwardFlopsPerToken per_token = forward_flops_per_token(backbone, seq_len, /*causal_span=*/true);
  const double backbone_gemm_flops = 3.0 * (per_token.attention_linear + per_token.mlp + per_token.logits) *
                                     static_cast<double>(global_batch) * static_cast<double>(seq_len);
  struct Candidate {
    double lower_bound_s;
    std::uint32_t backbone;
    std::array<std::uint32_t, kMaxGroups> option;  // index into that backbone's options[group]
  };
  struct BackboneOptions {
    BackboneCandidate backbone;
    std::vector<std::vector<GroupOption>> options;  // [group], ascending GPUs
    double envelope_bound_s = 0;  // no split of this count is faster
    std::vector<double> first_option_bound_s;  // [option of group 0]: no split with it is faster
  };
  std::vector<BackboneOptions> backbones;
  std::vector<Candidate> candidates;
  // The whole-node count where the backbone alone is fastest (fewer GPUs can beat all of them
  // when the count divides the batch and the heads better).
  double best_alone_s = 0;
  std::int64_t best_alone_gpus = 0;
  // Simulated time of each backbone count's best-bound split: an upper bound on that count's
  // best. A count whose lower bound passes the k-th smallest of these cannot make the top k.
  std::vector<double> upper_bounds;
  auto kth_upper_bound = [&]() {
    if (options.exhaustive || upper_bounds.size() < options.top_k) return kInfinity;
    std::vector<double> sorted = upper_bounds;
    std::nth_element(sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(options.top_k - 1), sorted.end());
    return sorted[options.top_k - 1];
  };
  auto option_pointers = [&](const BackboneOptions& bo_, const Candidate& c) {
    std::vector<const GroupOption*> chosen(G);
    for (std::size_t k = 0; k < G; ++k) chosen[k] = &bo_.options[k][c.option[k]];
    return chosen;
  };
  for (std::int64_t gb = (max_backbone / step) * step; gb >= step; gb -= step) {
    const double ideal_s =
        backbone_gemm_flops / (static_cast<double>(gb) * cluster.gpu.peak_flops(false) * cluster.gpu.gemm_efficiency);
    if (ideal_s >= kth_upper_bound()) break;  // fewer GPUs are slower still
    const PlanSearch s = search_plans(backbone, sub_cluster(cluster, gb), w, fix, bo);
    if (s.plans.empty()) continue;
    BackboneOptions entry;
    entry.backbone = backbone_candidate(model, cluster, gb, s.plans.front().plan, w, seqs);
    const BackboneCandidate& b = entry.backbone;
    if (best_alone_gpus == 0 || b.estimate.iteration_time_s < best_alone_s) {
      best_alone_s = b.estimate.iteration_time_s;
      best_alone_gpus = gb;
    }
    if (b.stage_bound_s + b.inputs.tail_s - b.interleaving_saving_s >= kth_upper_bound()) continue;
    const std::int64_t spare = N - gb;
    // Every group's options on each GPU count it could take (an idle group: none).
    for (const auto& g : groups) {
      std::vector<GroupOption> list;
      if (group_is_idle(g, b.loads)) {
        list.push_back(group_option(model, cluster, g, b.loads, ModulePlan{1, 0, Recompute::none}, 0));
      } else {
        const std::int64_t inflight = g.before_backbone ? b.plan.pp + 2 : 1;  // 1F1B depth of its stage
        for (std::int64_t gpus_here = 1; gpus_here <= spare; ++gpus_here)
          for (const GroupOption& o : group_options(model, cluster, g, b.loads, gpus_here, inflight, memory_limit,
                                                    !options.exhaustive))
            list.push_back(o);
      }
      entry.options.push_back(std::move(list));
    }
    // One simulation with every group at the envelope of all its options bounds every split of
    // this count; prefix[k][i] is group k's envelope over its options [0..i] (ascending GPUs).
    std::vector<std::vector<GroupStage>> prefix(G);
    std::vector<GroupStage> envelope;
    const auto slots = static_cast<std::size_t>(entry.backbone.loads.slots);
    const GroupStage no_work{{std::vector<double>(slots, 0.0), std::vector<double>(slots, 0.0)}, 0.0, 0.0};
    for (std::size_t k = 0; k < G; ++k) {
      prefix[k] = prefix_envelopes(model, cluster, entry.backbone, groups[k], entry.options[k]);
      envelope.push_back(prefix[k].empty() ? no_work : prefix[k].back());
    }
    const ExtendedPipeline lower = extended_pipeline(entry.backbone, groups, envelope);
    entry.envelope_bound_s = thread_pipeline_simulator().makespan(lower.costs) + lower.tail_s;
    ++out.simulated;
    if (entry.envelope_bound_s >= kth_upper_bound()) continue;
    // A bound per option of the first group: that option exactly, every other group at the
    // envelope of its options that still fit beside it (one simulation each).
    const bool every_group_has_options =
        std::all_of(entry.options.begin(), entry.options.end(), [](const auto& list) { return !list.empty(); });
    if (G > 0) entry.first_option_bound_s.assign(entry.options[0].size(), kInfinity);
    if (G > 0 && every_group_has_options) {
      std::int64_t others_need = 0;
      for (std::size_t k = 1; k < G; ++k) others_need += entry.options[k].front().gpus();
      for (std::size_t o = 0; o < entry.options[0].size(); ++o) {
        const GroupOption& first = entry.options[0][o];
        if (first.gpus() + others_need > spare) break;
        std::vector<GroupStage> stages{group_stage(model, cluster, entry.backbone, groups[0], first)};
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
        const ExtendedPipeline x = extended_pipeline(entry.backbone, groups, stages);
        entry.first_option_bound_s[o] = thread_pipeline_simulator().makespan(x.costs) + x.tail_s;
        ++out.simulated;
      }
    }
    backbones.push_back(std::move(entry));
    const BackboneOptions& here = backbones.back();
    const auto backbone_index = static_cast<std::uint32_t>(backbones.size() - 1);
    const std::size_t first_candidate = candidates.size();
    // Every combination of options whose GPUs fit in the spare ones (the rest idle).
    Candidate c{0, backbone_index, {}};
    std::vector<const GroupOption*> chosen(G);
    std::function<void(std::size_t, std::int64_t)> combine = [&](std::size_t k, std::int64_t left) {
      if (k == G) {
        c.lower_bound_s = std::max({here.envelope_bound_s, here.first_option_bound_s[c.option[0]],
                                    disaggregated_lower_bound_s(model, cluster, here.backbone, groups, chosen)});
        ++out.evaluated;
        candidates.push_back(c);
        return;
      }
      for (std::size_t o = 0; o < here.options[k].size(); ++o) {
        const GroupOption& option = here.options[k][o];
        if (option.gpus() > left) break;  // ascending GPUs
        c.option[k] = static_cast<std::uint32_t>(o);
        chosen[k] = &option;
        combine(k + 1, left - option.gpus());
      }
    };
    combine(0, spare);
    // Simulate this count's best-bound split now: its time bounds what other counts must beat.
    std::size_t best_here = candidates.size();
    for (std::size_t k = first_candidate; k < candidates.size(); ++k)
      if (best_here == candidates.size() || candidates[k].lower_bound_s < candidates[best_here].lower_bound_s)
        best_here = k;
    if (best_here < candidates.size()) {
      const ExtendedPipeline x =
          extended_pipeline(model, cluster, here.backbone, groups, option_pointers(here, candidates[best_here]));
      upper_bounds.push_back(thread_pipeline_simulator().makespan(x.costs) + x.tail_s);
      ++out.simulated;
    }
  }

  // Branch and bound: simulate in order of lower bound; results are distinct backbone counts
  // (each count's best split), best first.
  std::sort(candidates.begin(), candidates.end(),
            [](const Candidate& a, const Candidate& b) { return a.lower_bound_s < b.lower_bound_s; });
  std::vector<MultimodalPlan> found;
  auto kth_best = [&]() {
    if (options.exhaustive || found.size() < options.top_k) return kInfinity;
    return found[options.top_k - 1].iteration_time_s;
  };
  for (const Candidate& cand : candidates) {
    if (cand.lower_bound_s >= kth_best()) break;
    const BackboneOptions& entry = backbones[cand.backbone];
    const BackboneCandidate& b = entry.backbone;
    const auto own = std::find_if(found.begin(), found.end(), [&](const MultimodalPlan& f) { return f.backbone_gpus == b.gpus; });
    if (!options.exhaustive && own != found.end() && cand.lower_bound_s >= own->iteration_time_s)
      continue;  // cannot improve its count
    const std::vector<const GroupOption*> chosen = option_pointers(entry, cand);
    const ExtendedPipeline x = extended_pipeline(model, cluster, b, groups, chosen);
    ++out.simulated;
    MultimodalPlan p;
    p.disaggregated = true;
    p.backbone_plan = b.plan;
    p.backbone_gpus = b.gpus;
    p.iteration_time_s = thread_pipeline_simulator().makespan(x.costs) + x.tail_s;
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
    for (std::size_t k = 0; k < G; ++k) {
      const GroupOption& o = *chosen[k];
      p.gpus_used += o.gpus();
      p.peak_memory_bytes = std::max(p.peak_memory_bytes, o.peak_memory_bytes);
      for (std::size_t i : groups[k].members) {
        ModulePlacement& pl = p.modules[i];
        pl.gpus = o.gpus();
        pl.plan = o.plan;
        pl.busy_s = o.busy_s;
        pl.peak_memory_bytes = o.peak_memory_bytes;
      }
    }
    p.gpus_idle = N - p.gpus_used;
    p.fits = p.peak_memory_bytes <= memory_limit;
    fill_rates(p, cluster, flops, backbone_tokens_total, out.samples);
    auto better = [](const MultimodalPlan& a, const MultimodalPlan& b) {
      return a.iteration_time_s < b.iteration_time_s ||
             (a.iteration_time_s == b.iteration_time_s && a.gpus_used < b.gpus_used);
    };
    if (own == found.end()) found.push_back(p);
    else if (better(p, *own)) *own = p;
    std::sort(found.begin(), found.end(), better);
    if (!options.exhaustive && found.size() > options.top_k) found.resize(options.top_k);
  }
  if (found.size() > options.top_k) found.resize(options.top_k);
  out.plans = std::move(found);

  // The references, each on every GPU (the Megatron-LM way: the job's world size is the cluster)
  // and on the whole-node count where the backbone alone runs fastest, when that is fewer: the
  // backbone alone, text only (its MFU over all the cluster's GPUs), and the monolithic layout.
  PlannerOptions po;
  po.top_k = kMonolithicCandidates;
  po.threads = options.threads;
  const double peak = cluster.gpu.peak_flops(false);
  // `layouts_out` (when given) receives every valid layout tried, for the colocated search.
  auto references = [&](std::int64_t count, const PlanConstraints& space, MultimodalPlan& mono, bool& mono_found,
                        double& backbone_mfu, std::vector<Plan>* layouts_out) {
    const Cluster on = sub_cluster(cluster, count);
    const PlanSearch alone = search_plans(backbone, on, w, space, po);
    if (alone.plans.empty()) return;
    const Estimate& e = alone.plans.front().estimate;
    backbone_mfu = e.model_flops / (e.iteration_time_s * static_cast<double>(N) * peak);
    // Each candidate layout (and its lighter-first-stage variants) with the modules with or
    // without recompute, ranked on the heaviest replicas; the winner re-run on all of them.
    Recompute best_module_recompute = Recompute::none;
    for (const auto& cand : alone.plans)
      for (const Plan& layout : monolithic_layouts(cand.plan, backbone.layers)) {
        try {
          validate_plan(layout, backbone, on, w);
        } catch (const Error&) {
          continue;
        }
        if (layouts_out != nullptr) layouts_out->push_back(layout);
        for (Recompute module_recompute : {Recompute::none, Recompute::full}) {
          const MultimodalPlan m = monolithic_plan(model, on, seqs, layout, w, memory_limit, module_recompute,
                                                   kMonolithicReplicasRanked);
          ++out.simulated;
          if (!m.fits || (mono_found && m.iteration_time_s >= mono.iteration_time_s)) continue;
          mono = m;
          mono_found = true;
          best_module_recompute = module_recompute;
        }
      }
    if (!mono_found) return;
    mono = monolithic_plan(model, on, seqs, mono.backbone_plan, w, memory_limit, best_module_recompute, 0);
    mono.gpus_idle = N - mono.gpus_used;
    fill_rates(mono, cluster, flops, backbone_tokens_total, out.samples);
  };
  // Every plan on every GPU; on the subset, the per-count space (the time budget).
  PlanConstraints every_plan;
  every_plan.precision_choices = {Precision::bf16};
  std::vector<Plan> every_gpu_layouts;
  references(N, every_plan, out.monolithic, out.monolithic_found, out.backbone_only_mfu, &every_gpu_layouts);
  if (best_alone_gpus > 0 && best_alone_gpus != N) {
    out.subset_gpus = best_alone_gpus;
    references(best_alone_gpus, fix, out.monolithic_subset, out.monolithic_subset_found, out.backbone_only_subset_mfu,
               nullptr);
  }
  // Colocated on every GPU, over the monolithic search's layouts. Its space holds the monolithic
  // plan (every group sharing the backbone's layout at that layout and module recompute), which
  // is kept when the search's pick, ranked on the heaviest replicas, comes out slower over all.
  const ColocatedSearch colocated =
      search_colocated(model, cluster, seqs, every_gpu_layouts, w, memory_limit, kMonolithicReplicasRanked);
  out.simulated += colocated.evaluated;
  out.colocated = colocated.plan;
  out.colocated_found = colocated.found;
  if (out.monolithic_found) {
    const ColocatedLayouts shared = shared_layouts(model, cluster.gpus_per_node, module_recompute_of(out.monolithic));
    const MultimodalPlan identical =
        colocated_plan(model, cluster, seqs, out.monolithic.backbone_plan, w, shared, memory_limit, 0);
    if (!out.colocated_found || identical.iteration_time_s < out.colocated.iteration_time_s) out.colocated = identical;
    out.colocated_found = true;
  }
  if (out.colocated_found) fill_rates(out.colocated, cluster, flops, backbone_tokens_total, out.samples);
  out.search_time_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return out;
}

std::vector<MultimodalStrategy> ranked_strategies(const MultimodalSearch& s) {
  std::vector<MultimodalStrategy> found;  // in tie order
  if (!s.plans.empty()) found.push_back(MultimodalStrategy::disaggregated);
  if (s.monolithic_found) found.push_back(MultimodalStrategy::monolithic);
  if (s.monolithic_subset_found) found.push_back(MultimodalStrategy::monolithic_subset);
  if (s.colocated_found) found.push_back(MultimodalStrategy::colocated);
  // Insertion sort, stable, on at most four entries: std::stable_sort takes a temporary buffer
  // from nothrow operator new, which test_search's counting operator new / delete do not replace
  // (a new / free mismatch under ASan).
  for (std::size_t i = 1; i < found.size(); ++i)
    for (std::size_t j = i; j > 0 && strategy_plan(s, found[j]).iteration_time_s <
                                         strategy_plan(s, found[j - 1]).iteration_time_s;
         --j)
      std::swap(found[j], found[j - 1]);
  return found;
}

MultimodalStrategy recommended_strategy(const MultimodalSearch& s) {
  const std::vector<MultimodalStrategy> ranked = ranked_strategies(s);
  return ranked.empty() ? MultimodalStrategy::none : ranked.front();
}

const MultimodalPlan& strategy_plan(const MultimodalSearch& s, MultimodalStrategy strategy) {
  switch (strategy) {
    case MultimodalStrategy::disaggregated:
      if (!s.plans.empty()) return s.plans.front();
      break;
    case MultimodalStrategy::monolithic:
      if (s.monolithic_found) return s.monolithic;
      break;
    case MultimodalStrategy::monolithic_subset:
      if (s.monolithic_subset_found) return s.monolithic_subset;
      break;
    case MultimodalStrategy::colocated:
      if (s.colocated_found) return s.colocated;
      break;
    case MultimodalStrategy::none:
      break;
  }
  throw Error("plan", "no plan of that strategy fits", "a request where the strategy has a plan");
}

Timeline disaggregated_timeline(const MultimodalSpec& model, const Cluster& cluster, const DataMix& mix,
                                std::int64_t global_batch, const MultimodalPlan& plan, std::uint64_t seed) {
  if (!plan.disaggregated) throw Error("trace", "the plan is not disaggregated", "a disaggregated plan");
  const Workload w{global_batch, mix.sequence_tokens};
  const std::vector<PackedSequence> seqs = pack_sequences(model, mix, global_batch, seed);
  const BackboneCandidate b = backbone_candidate(model, cluster, plan.backbone_gpus, plan.backbone_plan, w, seqs);
  const std::vector<ModuleGroup> groups = module_groups(model, cluster.gpus_per_node);
  std::vector<GroupOption> options;
  for (const auto& g : groups)
    options.push_back(group_option(model, cluster, g, b.loads, plan.modules[g.members.front()].plan,
                                   g.before_backbone ? b.plan.pp + 2 : 1));
  std::vector<const GroupOption*> chosen;
  for (const auto& o : options) chosen.push_back(&o);
  return thread_pipeline_simulator().run(extended_pipeline(model, cluster, b, groups, chosen).costs);
}

Timeline monolithic_backbone_timeline(const MultimodalSpec& model, const Cluster& cluster, const DataMix& mix,
                                      std::int64_t global_batch, const MultimodalPlan& plan) {
  if (plan.disaggregated) throw Error("trace", "the plan is disaggregated", "a monolithic plan");
  const Workload w{global_batch, mix.sequence_tokens};
  Timeline timeline;
  (void)estimate_with_timeline(model.backbone().transformer, sub_cluster(cluster, plan.backbone_gpus),
                               plan.backbone_plan, w, timeline);
  return timeline;
}

}  // namespace tessera
