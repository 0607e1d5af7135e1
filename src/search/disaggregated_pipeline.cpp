#include "search/disaggregated_pipeline.h"

#include <algorithm>

#include "core/units.h"

namespace tessera {

Cluster sub_cluster(const Cluster& cluster, std::int64_t gpus) {
  Cluster c = cluster;
  c.nodes = gpus / cluster.gpus_per_node;
  if (c.nodes * cluster.gpus_per_node != gpus) {  // a partial node: one node of that many GPUs
    c.nodes = 1;
    c.gpus_per_node = gpus;
  }
  return c;
}

BackboneCandidate backbone_candidate(const MultimodalSpec& model, const Cluster& cluster, std::int64_t gpus,
                                     const Plan& plan, const Workload& w, const std::vector<PackedSequence>& seqs) {
  BackboneCandidate b;
  b.gpus = gpus;
  b.plan = plan;
  const Cluster on = sub_cluster(cluster, gpus);
  const ModelSpec& backbone = model.backbone().transformer;
  b.estimate = estimate_with_pipeline_inputs(backbone, on, plan, w, b.inputs);
  if (plan.vpp > 1) {
    Plan plain = plan;
    plain.vpp = 1;
    plain.first_stage_layers = plain.last_stage_layers = 0;
    plain.account_embedding = plain.account_loss = false;
    const Estimate e = estimate_with_pipeline_inputs(backbone, on, plain, w, b.inputs);
    b.interleaving_saving_s = std::max(0.0, e.iteration_time_s - b.estimate.iteration_time_s);
  }
  b.loads = slot_loads(model, seqs, plan.dp, plan.micro_batch);
  const PipelineCosts& c = b.inputs.costs;
  const auto slots = static_cast<std::size_t>(c.microbatches);
  double head = 0, tail = 0;
  for (int s = 0; s < c.stages; ++s) {
    const std::size_t first = static_cast<std::size_t>(s) * slots, last = first + slots - 1;
    double busy = 0;
    for (std::size_t j = 0; j < slots; ++j) busy += c.forward_s[first + j] + c.backward_s[first + j];
    // The sync may start with the last backward (overlapped) or after it.
    const double sync = c.dp_sync_s.empty() ? 0.0 : c.dp_sync_s[static_cast<std::size_t>(s)];
    const double sync_after = std::max(0.0, c.dp_sync_overlap ? sync - c.backward_s[last] : sync);
    b.stage_head_busy_s.push_back(head + busy);
    b.stage_drain_s.push_back(tail);
    b.stage_sync_after_s.push_back(sync_after);
    b.stage_busy_s = std::max(b.stage_busy_s, busy);
    b.stage_bound_s = std::max(b.stage_bound_s, head + busy + std::max(tail, sync_after));
    const double p2p = s + 1 < c.stages ? c.p2p_s[static_cast<std::size_t>(s)] : 0.0;
    head += c.forward_s[first] + p2p;
    tail += c.backward_s[last] + p2p;
  }
  b.forward_through_s = head;
  b.backward_through_s = tail;
  return b;
}

double group_transfer_s(const MultimodalSpec& model, const Cluster& cluster, const BackboneCandidate& b,
                        const ModuleGroup& group, const GroupOption& option) {
  // What crosses: the projected media tokens (encoders), or one backbone-width conditioning
  // vector per latent token (the generator), 16-bit, through the NICs of the smaller side.
  double tokens = 0;
  for (std::size_t i : group.members) {
    const ModuleSpec& m = model.modules[i];
    if (m.role == ModuleRole::projector || m.role == ModuleRole::generator) tokens += b.loads.mean[i].tokens;
  }
  if (tokens <= 0 || option.gpus() == 0) return 0.0;
  const double bytes = units::kBytesBf16 * tokens * static_cast<double>(model.backbone().transformer.hidden);
  const std::int64_t stage_gpus = b.plan.tp * b.plan.cp * b.plan.dp;
  const double links = static_cast<double>(std::max<std::int64_t>(1, std::min(option.gpus(), stage_gpus)));
  return cluster.inter_node.latency_s + bytes / (links * cluster.inter_node.bandwidth_bytes_per_s);
}

double disaggregated_lower_bound_s(const MultimodalSpec& model, const Cluster& cluster, const BackboneCandidate& b,
                                   const std::vector<ModuleGroup>& groups,
                                   const std::vector<const GroupOption*>& options) {
  // The encoder stage runs its groups side by side (per slot, the slowest), as does the generator's.
  double pre_busy = 0, pre_first = 0, pre_last = 0, pre_p2p = 0, pre_end = 0;
  double post_busy = 0, post_p2p = 0, post_sync_after = 0;
  const bool overlap = b.inputs.costs.dp_sync_overlap;
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const GroupOption& o = *options[k];
    const double p2p = group_transfer_s(model, cluster, b, groups[k], o);
    // A group's sync may start with its last backward (overlapped) or after it.
    const double sync_after = std::max(0.0, overlap ? o.sync_s - o.last_bwd_s : o.sync_s);
    if (groups[k].before_backbone) {
      pre_busy = std::max(pre_busy, o.busy_s);
      pre_end = std::max(pre_end, o.busy_s + sync_after);
      pre_first = std::max(pre_first, o.first_fwd_s);
      pre_last = std::max(pre_last, o.last_bwd_s);
      pre_p2p = std::max(pre_p2p, p2p);
    } else {
      post_busy = std::max(post_busy, o.busy_s);
      post_sync_after = std::max(post_sync_after, sync_after);
      post_p2p = std::max(post_p2p, p2p);
    }
  }
  // Every stage: the fill before its work, its work, and the later of the drain behind it and
  // its own sync.
  const double head = pre_first + pre_p2p, drain = pre_last + pre_p2p;
  double bound = pre_end;
  for (std::size_t s = 0; s < b.stage_head_busy_s.size(); ++s)
    bound = std::max(bound, head + b.stage_head_busy_s[s] + std::max(b.stage_drain_s[s] + drain, b.stage_sync_after_s[s]));
  if (post_busy > 0)
    bound = std::max(bound, head + b.forward_through_s + post_p2p + post_busy +
                                std::max(post_p2p + b.backward_through_s + drain, post_sync_after));
  return bound + b.inputs.tail_s - b.interleaving_saving_s;
}

ExtendedPipeline extended_pipeline(const BackboneCandidate& b, const std::vector<ModuleGroup>& groups,
                                   const std::vector<GroupStage>& stages) {
  ExtendedPipeline x;
  const PipelineCosts& bc = b.inputs.costs;
  const bool has_pre = std::any_of(groups.begin(), groups.end(), [](const ModuleGroup& g) { return g.before_backbone; });
  const bool has_post = std::any_of(groups.begin(), groups.end(), [](const ModuleGroup& g) { return !g.before_backbone; });
  const int pre = has_pre ? 1 : 0, post = has_post ? 1 : 0;
  PipelineCosts& c = x.costs;
  c.schedule = Schedule::one_f_one_b;
  c.stages = bc.stages + pre + post;
  c.microbatches = bc.microbatches;
  c.chunks = 1;
  const auto slots = static_cast<std::size_t>(bc.microbatches);
  c.forward_s.assign(static_cast<std::size_t>(c.stages) * slots, 0.0);
  c.backward_s.assign(static_cast<std::size_t>(c.stages) * slots, 0.0);
  c.weight_s.clear();
  c.p2p_s.assign(static_cast<std::size_t>(c.stages), 0.0);
  c.dp_sync_s.assign(static_cast<std::size_t>(c.stages), 0.0);
  c.dp_sync_overlap = bc.dp_sync_overlap;
  for (int s = 0; s < bc.stages; ++s) {
    const auto from = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s) * slots);
    const auto to = static_cast<std::ptrdiff_t>(static_cast<std::size_t>(s + pre) * slots);
    std::copy_n(bc.forward_s.begin() + from, slots, c.forward_s.begin() + to);
    std::copy_n(bc.backward_s.begin() + from, slots, c.backward_s.begin() + to);
    if (s + 1 < bc.stages) c.p2p_s[static_cast<std::size_t>(s + pre)] = bc.p2p_s[static_cast<std::size_t>(s)];
    c.dp_sync_s[static_cast<std::size_t>(s + pre)] = bc.dp_sync_s[static_cast<std::size_t>(s)];
  }
  for (std::size_t k = 0; k < groups.size(); ++k) {
    const ModuleGroup& g = groups[k];
    const GroupStage& t = stages[k];
    // Groups on one side run side by side: per slot, the slowest sets the stage's time.
    const std::size_t stage = g.before_backbone ? 0 : static_cast<std::size_t>(c.stages - 1);
    for (std::size_t j = 0; j < slots; ++j) {
      c.forward_s[stage * slots + j] = std::max(c.forward_s[stage * slots + j], t.times.fwd_s[j]);
      c.backward_s[stage * slots + j] = std::max(c.backward_s[stage * slots + j], t.times.bwd_s[j]);
    }
    const std::size_t boundary = g.before_backbone ? 0 : static_cast<std::size_t>(c.stages - 2);
    c.p2p_s[boundary] = std::max(c.p2p_s[boundary], t.transfer_s);
    c.dp_sync_s[stage] = std::max(c.dp_sync_s[stage], t.sync_s);
  }
  c.p2p_s[static_cast<std::size_t>(c.stages - 1)] = 0.0;  // no wrap without interleaving
  x.tail_s = b.inputs.tail_s - b.interleaving_saving_s;
  return x;
}

GroupStage group_stage(const MultimodalSpec& model, const Cluster& cluster, const BackboneCandidate& b,
                       const ModuleGroup& group, const GroupOption& option) {
  return {group_slot_times(model, cluster, group, b.loads, option.plan), group_transfer_s(model, cluster, b, group, option),
          option.sync_s};
}

ExtendedPipeline extended_pipeline(const MultimodalSpec& model, const Cluster& cluster, const BackboneCandidate& b,
                                   const std::vector<ModuleGroup>& groups,
                                   const std::vector<const GroupOption*>& options) {
  std::vector<GroupStage> stages;
  for (std::size_t k = 0; k < groups.size(); ++k) stages.push_back(group_stage(model, cluster, b, groups[k], *options[k]));
  return extended_pipeline(b, groups, stages);
}

std::vector<GroupStage> prefix_envelopes(const MultimodalSpec& model, const Cluster& cluster, const BackboneCandidate& b,
                                         const ModuleGroup& group, const std::vector<GroupOption>& options) {
  std::vector<GroupStage> out;
  out.reserve(options.size());
  for (const auto& o : options) {
    GroupStage e = group_stage(model, cluster, b, group, o);
    if (!out.empty()) {
      const GroupStage& before = out.back();
      for (std::size_t j = 0; j < e.times.fwd_s.size(); ++j) {
        e.times.fwd_s[j] = std::min(e.times.fwd_s[j], before.times.fwd_s[j]);
        e.times.bwd_s[j] = std::min(e.times.bwd_s[j], before.times.bwd_s[j]);
      }
      e.transfer_s = std::min(e.transfer_s, before.transfer_s);
      e.sync_s = std::min(e.sync_s, before.sync_s);
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace tessera
