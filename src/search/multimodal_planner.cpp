#include "search/multimodal_planner.h"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "core/checks.h"
#include "core/error.h"
#include "cost/cost_model.h"
#include "cost/pipeline_runs.h"
#include "model/flops.h"
#include "search/colocated_plan.h"
#include "search/disaggregated_pipeline.h"
#include "search/module_group.h"
#include "search/monolithic_plan.h"
#include "search/plan_space.h"
#include "search/planner.h"
#include "search/split_search.h"

namespace tessera {

namespace {

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

// Throws Error naming the field for an invalid model, cluster, mix or batch, or one past the
// search's limits.
void check_request(const MultimodalSpec& model, const Cluster& cluster, const DataMix& mix, std::int64_t global_batch) {
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
  const ModelSpec& backbone = model.backbone().transformer;
  if (mix.sequence_tokens > backbone.max_context)
    throw Error("data.sequence_tokens", std::to_string(mix.sequence_tokens) + " exceeds the backbone's context " +
                                            std::to_string(backbone.max_context),
                "at most " + std::to_string(backbone.max_context));
}

// What one step trains, whatever the strategy: the rates of every plan divide it by its time.
struct StepWork {
  std::int64_t samples = 0;     // packed into the step's sequences
  double backbone_tokens = 0;   // text + media
  double media_tokens = 0;      // the projectors' output
  double model_flops = 0;       // every module (Megatron-Core convention per module)
};

StepWork step_work(const MultimodalSpec& model, const std::vector<PackedSequence>& seqs, std::int64_t seq_len) {
  StepWork work;
  const std::size_t bi = model.backbone_index();
  std::vector<ModuleLoad> total(model.modules.size());
  for (const auto& q : seqs) {
    work.samples += q.samples;
    work.backbone_tokens += q.modules[bi].tokens;
    for (std::size_t i = 0; i < model.modules.size(); ++i)
      if (model.modules[i].role == ModuleRole::projector) work.media_tokens += q.modules[i].tokens;
    for (std::size_t i = 0; i < total.size(); ++i) total[i] += q.modules[i];
  }
  for (std::size_t i = 0; i < total.size(); ++i) {
    const ModuleSpec& m = model.modules[i];
    if (m.role == ModuleRole::backbone)
      work.model_flops += iteration_flops(m.transformer, total[i].tokens, seq_len, Recompute::none).model();
    else  // forward + backward (2x forward), Megatron-Core convention; a frozen module runs forward only
      work.model_flops += (m.trainable ? 3.0 : 1.0) * module_forward_flops(m, total[i].tokens, total[i].tokens_squared);
  }
  return work;
}

void fill_rates(MultimodalPlan& p, const Cluster& cluster, const StepWork& work) {
  p.model_flops = work.model_flops;
  p.mfu = work.model_flops / (p.iteration_time_s * static_cast<double>(cluster.gpus()) * cluster.gpu.peak_flops(false));
  p.tokens_per_s = work.backbone_tokens / p.iteration_time_s;
  p.samples_per_s = static_cast<double>(work.samples) / p.iteration_time_s;
}

// What the reference strategies (monolithic, colocated) are given.
struct StepRequest {
  const MultimodalSpec& model;
  const Cluster& cluster;
  const std::vector<PackedSequence>& sequences;
  Workload workload;
  double memory_limit_bytes = 0;
  int threads = 0;
  StepWork work;
};

// The Megatron-LM way on `gpus` GPUs of the cluster: the backbone alone, text only, and the best
// monolithic plan.
struct MonolithicReference {
  MultimodalPlan plan;
  bool found = false;
  double backbone_only_mfu = 0;  // over the whole cluster
  std::vector<Plan> layouts;     // every valid layout tried (with keep_layouts), for the colocated search
  std::int64_t simulated = 0;
};

// Each of the backbone planner's best layouts on `gpus` (and its lighter-first-stage variants)
// with the modules with or without recompute, ranked on the heaviest replicas; the winner re-run
// on all of them.
MonolithicReference monolithic_reference(const StepRequest& r, std::int64_t gpus, const PlanConstraints& space,
                                         bool keep_layouts) {
  MonolithicReference ref;
  PlannerOptions po;
  po.top_k = kMonolithicCandidates;
  po.threads = r.threads;
  const ModelSpec& backbone = r.model.backbone().transformer;
  const Cluster on = sub_cluster(r.cluster, gpus);
  const PlanSearch alone = search_plans(backbone, on, r.workload, space, po);
  if (alone.plans.empty()) return ref;
  const Estimate& e = alone.plans.front().estimate;
  ref.backbone_only_mfu = e.model_flops / (e.iteration_time_s * static_cast<double>(r.cluster.gpus()) *
                                           r.cluster.gpu.peak_flops(false));
  Recompute best_module_recompute = Recompute::none;
  for (const auto& cand : alone.plans)
    for (const Plan& layout : monolithic_layouts(cand.plan, backbone.layers)) {
      if (!is_valid_plan(layout, backbone, on, r.workload)) continue;
      if (keep_layouts) ref.layouts.push_back(layout);
      for (Recompute module_recompute : {Recompute::none, Recompute::full}) {
        const MultimodalPlan m = monolithic_plan(r.model, on, r.sequences, layout, r.workload, r.memory_limit_bytes,
                                                 module_recompute, kMonolithicReplicasRanked);
        ++ref.simulated;
        if (!m.fits || (ref.found && m.iteration_time_s >= ref.plan.iteration_time_s)) continue;
        ref.plan = m;
        ref.found = true;
        best_module_recompute = module_recompute;
      }
    }
  if (!ref.found) return ref;
  ref.plan = monolithic_plan(r.model, on, r.sequences, ref.plan.backbone_plan, r.workload, r.memory_limit_bytes,
                             best_module_recompute, 0);
  ref.plan.gpus_idle = r.cluster.gpus() - ref.plan.gpus_used;
  fill_rates(ref.plan, r.cluster, r.work);
  return ref;
}

// The recompute a monolithic plan runs its modules with (one for all of them).
Recompute module_recompute_of(const MultimodalPlan& monolithic) {
  for (const auto& m : monolithic.modules)
    if (m.role != ModuleRole::backbone) return m.plan.recompute;
  return Recompute::none;
}

struct ColocatedReference {
  MultimodalPlan plan;
  bool found = false;
  std::int64_t simulated = 0;
};

// Colocated on every GPU, over the monolithic search's layouts. Its space holds the monolithic
// plan (every group sharing the backbone's layout at that layout and module recompute), which is
// kept when the search's pick, ranked on the heaviest replicas, comes out slower over all.
ColocatedReference colocated_reference(const StepRequest& r, const MonolithicReference& monolithic) {
  const ColocatedSearch search = search_colocated(r.model, r.cluster, r.sequences, monolithic.layouts, r.workload,
                                                  r.memory_limit_bytes, kMonolithicReplicasRanked);
  ColocatedReference ref{search.plan, search.found, search.evaluated};
  if (monolithic.found) {
    const ColocatedLayouts shared =
        shared_layouts(r.model, r.cluster.gpus_per_node, module_recompute_of(monolithic.plan));
    const MultimodalPlan identical = colocated_plan(r.model, r.cluster, r.sequences, monolithic.plan.backbone_plan,
                                                    r.workload, shared, r.memory_limit_bytes, 0);
    if (!ref.found || identical.iteration_time_s < ref.plan.iteration_time_s) ref.plan = identical;
    ref.found = true;
  }
  if (ref.found) fill_rates(ref.plan, r.cluster, r.work);
  return ref;
}

}  // namespace

// Check the request and pack the step; then the disaggregated search (branch and bound over GPU
// splits, search/split_search.h) and the references it is measured against: monolithic on every
// GPU and on the subset where the backbone alone runs fastest, and colocated.
MultimodalSearch search_multimodal_plans(const MultimodalSpec& model, const Cluster& cluster, const DataMix& mix,
                                         std::int64_t global_batch, const MultimodalOptions& options) {
  const auto started = std::chrono::steady_clock::now();
  check_request(model, cluster, mix, global_batch);
  const Workload w{global_batch, mix.sequence_tokens};
  const std::vector<PackedSequence> seqs = pack_sequences(model, mix, global_batch, options.seed);
  const StepWork work = step_work(model, seqs, w.seq_len);
  MultimodalSearch out;
  out.sequences = global_batch;
  out.samples = work.samples;
  out.media_token_fraction = work.backbone_tokens > 0 ? work.media_tokens / work.backbone_tokens : 0.0;
  // The planner's memory limit (usable memory less its default headroom), for modules and backbone alike.
  const double memory_limit = tessera::memory_limit(cluster, PlanConstraints{}).limit_bytes;

  // Disaggregated: backbone candidates on whole nodes, module groups on the rest.
  const std::vector<ModuleGroup> groups = module_groups(model, cluster.gpus_per_node);
  if (groups.size() > kMaxGroups)
    throw Error("model.modules", std::to_string(groups.size()) + " module groups", "at most " + std::to_string(kMaxGroups));
  const SplitRequest split{model, cluster, seqs, groups, w, memory_limit, options};
  SplitSpace space = split_candidates(split);
  out.plans = best_splits(split, space);
  for (auto& p : out.plans) fill_rates(p, cluster, work);
  out.evaluated = space.evaluated;
  out.simulated = space.simulated;

  // The references on every GPU (the Megatron-LM way: the job's world size is the cluster; the
  // planner's whole space) and on the whole-node count where the backbone alone ran fastest in
  // the split search, when that is fewer (its reduced space): the disaggregated plan may leave
  // GPUs idle too.
  const StepRequest step{model, cluster, seqs, w, memory_limit, options.threads, work};
  const PlanConstraints every_plan;  // bf16 and FP8 where the GPU has it
  const MonolithicReference whole = monolithic_reference(step, cluster.gpus(), every_plan, /*keep_layouts=*/true);
  out.monolithic = whole.plan;
  out.monolithic_found = whole.found;
  out.backbone_only_mfu = whole.backbone_only_mfu;
  out.simulated += whole.simulated;
  if (space.best_alone_gpus > 0 && space.best_alone_gpus != cluster.gpus()) {
    out.subset_gpus = space.best_alone_gpus;
    const MonolithicReference subset =
        monolithic_reference(step, space.best_alone_gpus, backbone_count_space(), /*keep_layouts=*/false);
    out.monolithic_subset = subset.plan;
    out.monolithic_subset_found = subset.found;
    out.backbone_only_subset_mfu = subset.backbone_only_mfu;
    out.simulated += subset.simulated;
  }
  const ColocatedReference colocated = colocated_reference(step, whole);
  out.colocated = colocated.plan;
  out.colocated_found = colocated.found;
  out.simulated += colocated.simulated;
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

namespace {
// The step's tail after the pipeline (data-parallel gradient traffic and the optimizer step:
// ExtendedPipeline::tail_s) on every stage's dp-sync track, so a trace and its chart span the
// whole step the plan is priced at (issue 32: they stopped at the pipeline, 1.52 s of 2.14 s).
void add_step_tail(Timeline& timeline, double tail_s) {
  if (tail_s <= 0) return;
  const double start_s = timeline.pipeline_makespan_s;
  for (std::size_t s = 0; s < timeline.stages.size(); ++s)
    timeline.syncs.push_back({static_cast<std::int32_t>(s), start_s, start_s + tail_s});
  timeline.makespan_s = std::max(timeline.makespan_s, start_s + tail_s);
}
}  // namespace

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
  const ExtendedPipeline x = extended_pipeline(model, cluster, b, groups, chosen);
  Timeline timeline = thread_pipeline_simulator().run(x.costs);
  add_step_tail(timeline, x.tail_s);
  return timeline;
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
