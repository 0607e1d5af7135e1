#include "cost/cost_model.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <unordered_map>

#include "cost/collective_cost.h"
#include "cost/compute_cost.h"
#include "cost/layer_cost.h"
#include "cost/memory_model.h"
#include "core/units.h"
#include "model/flops.h"
#include "model/parameter_count.h"
#include "schedule/pipeline_bubble.h"
#include "schedule/pipeline_simulator.h"

namespace tessera {

namespace {

constexpr double kB16 = units::kBytesBf16;
// Backward of a linear layer: input-gradient and weight-gradient GEMMs of the forward's shape.
constexpr double kGemmBackwardOverForward = 2.0;
// Cross-entropy over fp32 logits as Megatron-LM's vocab-parallel loss runs it in separate
// PyTorch ops (core/tensor_parallel/cross_entropy.py, r0.8): transpose, upcast, max, subtract,
// exp, sum, divide forward (~42 bytes per logit); softmax-minus-one-hot, scale, downcast,
// transpose backward (~26 bytes).
constexpr double kLossBytesPerLogit = 68.0;
// Adam step (fused multi-tensor): read fp32 param, grad, m, v; write param, m, v, 16-bit copy;
// plus the gradient-norm pass over the fp32 gradients.
constexpr double kAdamStepBytesPerParam = 4.0 * 4 + 4.0 * 3 + 2.0 + 4.0;

// Per-micro-batch time of one physical stage, split into its parts.
struct StageCost {
  double compute_s = 0;    // forward + backward + recompute compute
  double recompute_s = 0;
  double tp_s = 0, cp_s = 0, ep_s = 0;
  double fwd_s = 0, bwd_s = 0;  // forward / backward (incl. recompute and comm) of one micro-batch
  double total() const { return compute_s + tp_s + cp_s + ep_s; }
};

void add_layers(StageCost& s, const LayerCost& l, double count) {
  if (count <= 0) return;
  s.compute_s += count * (l.fwd_s + l.bwd_s + l.recompute_s);
  s.recompute_s += count * l.recompute_s;
  s.tp_s += count * l.tp_s;
  s.cp_s += count * l.cp_s;
  s.ep_s += count * l.ep_s;
  // Split communication between forward and backward by the compute ratio.
  const double compute = l.fwd_s + l.bwd_s + l.recompute_s;
  const double fwd_share = compute > 0 ? l.fwd_s / compute : 0.5;
  s.fwd_s += count * (l.fwd_s + l.comm_s * fwd_share);
  s.bwd_s += count * (l.bwd_s + l.recompute_s + l.comm_s * (1.0 - fwd_share));
}

// MoE layers on physical stage s (its chunks s, s + pp, ...), from the model's layer pattern.
std::int64_t moe_layers_on_stage(const ModelSpec& m, const LayerSplit& split, std::int64_t s, std::int64_t pp) {
  if (!m.is_moe()) return 0;
  std::int64_t moe = 0;
  for (std::int64_t k = s; k < split.virtual_stages; k += pp) {
    const std::int64_t start = split.virtual_stage_start(k);
    moe += m.moe_layers_in(start, start + split.virtual_stage_layers(k));
  }
  return moe;
}

// Reused simulation inputs and simulator (per thread: the planner evaluates in parallel).
PipelineCosts& simulation_costs() {
  thread_local PipelineCosts costs;
  return costs;
}
PipelineSimulator& simulator() {
  thread_local PipelineSimulator sim;
  return sim;
}

double simulate_into(const PipelineCosts& costs, Timeline& timeline, double& pipeline_s) {
  timeline = simulator().run(costs);
  pipeline_s = timeline.pipeline_makespan_s;
  return timeline.makespan_s;
}

// Memoised simulation, keyed by a 64-bit hash (FNV-1a) of the schedule, shape and every cost:
// the planner re-scores the same pipelines many times.
double memoised_makespan(const PipelineCosts& costs, double& pipeline_s) {
  constexpr std::size_t kMaxEntries = 1 << 14;
  thread_local std::unordered_map<std::uint64_t, std::pair<double, double>> memo;
  std::uint64_t hash = 1469598103934665603ULL;
  auto mix = [&hash](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      hash ^= (v >> (8 * i)) & 0xFF;
      hash *= 1099511628211ULL;
    }
  };
  auto mix_double = [&mix](double d) { mix(std::bit_cast<std::uint64_t>(d)); };
  mix(static_cast<std::uint64_t>(costs.schedule));
  mix(static_cast<std::uint64_t>(costs.stages));
  mix(static_cast<std::uint64_t>(costs.microbatches));
  mix(static_cast<std::uint64_t>(costs.chunks));
  mix(costs.dp_sync_overlap ? 1 : 0);
  // Costs are uniform over micro-batches here: one value per virtual stage suffices.
  const std::size_t m = static_cast<std::size_t>(costs.microbatches);
  for (std::size_t k = 0; k < costs.virtual_stages(); ++k) {
    mix_double(costs.forward_s[k * m]);
    mix_double(costs.backward_s[k * m]);
  }
  for (double v : costs.p2p_s) mix_double(v);
  for (double v : costs.dp_sync_s) mix_double(v);
  if (const auto it = memo.find(hash); it != memo.end()) {
    pipeline_s = it->second.second;
    return it->second.first;
  }
  const double with_sync = simulator().makespan(costs, &pipeline_s);
  if (memo.size() >= kMaxEntries) memo.clear();
  memo.emplace(hash, std::make_pair(with_sync, pipeline_s));
  return with_sync;
}

// Both paths: everything but the pipeline term is shared.
Estimate estimate_with(const ModelSpec& m, const Cluster& c, const Plan& p, const Workload& w,
                       PipelineModel mode, Timeline* timeline, PipelineInputs* inputs = nullptr) {
  const LayerContext x = make_layer_context(
      m, c, p, w.seq_len, static_cast<double>(p.micro_batch) * static_cast<double>(w.seq_len) / static_cast<double>(p.cp),
      /*causal=*/true);

  const bool any_moe = m.is_moe();
  const LayerCost dense_layer = m.dense_mlp_layers() > 0 ? layer_cost(x, false, p.recompute) : LayerCost{};
  const LayerCost moe_layer = any_moe ? layer_cost(x, true, p.recompute) : LayerCost{};
  // Full recompute of only some layers: the others run as without recompute.
  const bool partial = p.recompute == Recompute::full && p.recompute_layers > 0;
  const LayerCost dense_plain = partial && m.dense_mlp_layers() > 0 ? layer_cost(x, false, Recompute::none) : dense_layer;
  const LayerCost moe_plain = partial && any_moe ? layer_cost(x, true, Recompute::none) : moe_layer;
  const LayerSplit split = split_layers(p, m.layers);
  const double h = static_cast<double>(m.hidden);
  const double T = x.tokens;
  const double tp_one = p.tp > 1 ? all_reduce_time_s(kB16 * T * h, p.tp, x.tp_link) : 0.0;

  // Embedding: a lookup (memory-bound), vocab-parallel all-reduce; gradient scatter-add in fp32.
  StageCost embed;
  embed.compute_s = memory_bound_time_s((kB16 + units::kBytesFp32 * 2.0) * T * h, c.gpu);
  embed.tp_s = tp_one;
  embed.fwd_s = embed.compute_s / 3.0 + tp_one;
  embed.bwd_s = embed.compute_s * 2.0 / 3.0;
  // Output layer: final norm, logit GEMM (forward + two backward), cross-entropy.
  StageCost head;
  {
    const double vocab_local = static_cast<double>(m.vocab) / x.tp;
    const double gemm = gemm_time_s(T, vocab_local, h, 1.0, c.gpu, false);
    const double loss = memory_bound_time_s(kLossBytesPerLogit * T * vocab_local, c.gpu);
    head.compute_s = gemm * (1.0 + kGemmBackwardOverForward) + loss;
    head.tp_s = p.sequence_parallel ? tp_one : 0.0;  // gather the sequence before the logits
    head.fwd_s = gemm + loss / 2.0 + head.tp_s / 2.0;
    head.bwd_s = head.compute_s - gemm - loss / 2.0 + head.tp_s / 2.0;
  }

  // Cost of one micro-batch on virtual stage k (chunk k / pp of physical stage k % pp): its
  // layers, the embedding on the first, the output layer and loss on the last.
  const std::int64_t virtual_stages = split.virtual_stages;
  auto add_cost = [](StageCost& sc, const StageCost& e) {
    sc.compute_s += e.compute_s;
    sc.recompute_s += e.recompute_s;
    sc.tp_s += e.tp_s;
    sc.cp_s += e.cp_s;
    sc.ep_s += e.ep_s;
    sc.fwd_s += e.fwd_s;
    sc.bwd_s += e.bwd_s;
  };
  auto chunk_cost = [&](std::int64_t k) {
    StageCost sc;
    const std::int64_t start = split.virtual_stage_start(k);
    const std::int64_t length = split.virtual_stage_layers(k);
    const std::int64_t moe = m.moe_layers_in(start, start + length);
    // Megatron's block method recomputes the first N layers of the chunk.
    const std::int64_t recomputed = partial ? std::min(p.recompute_layers, length) : length;
    const std::int64_t moe_recomputed = m.moe_layers_in(start, start + recomputed);
    add_layers(sc, dense_layer, static_cast<double>(recomputed - moe_recomputed));
    add_layers(sc, dense_plain, static_cast<double>(length - moe - (recomputed - moe_recomputed)));
    add_layers(sc, moe_layer, static_cast<double>(moe_recomputed));
    add_layers(sc, moe_plain, static_cast<double>(moe - moe_recomputed));
    if (k == 0) add_cost(sc, embed);
    if (k == virtual_stages - 1) {
      add_cost(sc, head);
      // Multi-token prediction modules follow the last layer on the last stage (Megatron-Core
      // multi_token_prediction.py): a 2h -> h projection, one layer of the last layer's kind, and
      // their own pass through the shared output head and loss.
      if (m.mtp_layers > 0) {
        const double count = static_cast<double>(m.mtp_layers);
        add_layers(sc, m.is_moe_layer(m.layers - 1) ? moe_layer : dense_layer, count);
        StageCost mtp_head = head;
        const double projection = gemm_time_s(T, h / x.tp, 2.0 * h, 1.0, c.gpu, x.fp8);
        mtp_head.compute_s += projection * (1.0 + kGemmBackwardOverForward);
        mtp_head.fwd_s += projection;
        mtp_head.bwd_s += projection * kGemmBackwardOverForward;
        for (std::int64_t i = 0; i < m.mtp_layers; ++i) add_cost(sc, mtp_head);
      }
    }
    return sc;
  };
  auto stage_cost = [&](std::int64_t s) {
    StageCost sc;
    for (std::int64_t k = s; k < virtual_stages; k += p.pp) add_cost(sc, chunk_cost(k));
    return sc;
  };

  // Stages: the first, the last, those holding leading dense layers, and one representative of
  // the identical middle stages.
  const std::int64_t pp = p.pp;
  std::int64_t special_end = 1;  // stages [0, special_end) are evaluated one by one
  if (any_moe) {
    // Stages whose mix of dense and MoE layers differs from the middle stages' (leading dense
    // layers; an alternating pattern that does not divide the chunk).
    // An alternating pattern can differ on every stage: each is evaluated.
    if (m.moe.layer_freq > 1) special_end = std::max<std::int64_t>(1, pp - 1);
    const std::int64_t typical = pp > 2 ? moe_layers_on_stage(m, split, pp - 2, pp) : 0;
    while (special_end < pp - 1 && moe_layers_on_stage(m, split, special_end, pp) != typical) ++special_end;
  }
  const std::int64_t microbatches = p.microbatches(w);
  const std::int64_t dp_ranks = p.dp * p.cp;  // gradients are reduced over dp x cp
  const std::int64_t edp_ranks = std::max<std::int64_t>(1, p.expert_dp());
  const GroupLink dp_link = group_link(c, p.tp, dp_ranks);
  const GroupLink edp_link = group_link(c, p.expert_tp() * p.ep, edp_ranks);

  auto stage_shape = [&](std::int64_t s) {
    StageShape shape;
    shape.layers = split.physical_stage_layers(s, pp);
    shape.moe_layers = moe_layers_on_stage(m, split, s, pp);
    shape.framework = p.framework;
    shape.has_embedding = s == 0;
    shape.has_output_head = s == pp - 1;
    shape.recomputed_layers = 0;
    for (std::int64_t k = s; k < virtual_stages; k += pp) {
      const std::int64_t length = split.virtual_stage_layers(k);
      shape.recomputed_layers += p.recomputed_layers(length);
    }
    // 1F1B holds p - s micro-batches on stage s; interleaving adds (p-1)/(p v) (Korthikanti §4.2.3).
    double inflight = static_cast<double>(std::min<std::int64_t>(pp - s, microbatches));
    if (p.vpp > 1) inflight *= 1.0 + static_cast<double>(pp - 1) / static_cast<double>(pp * p.vpp);
    shape.inflight_microbatches = inflight;
    return shape;
  };
  // Collectives over a stage's parameters: dense ones over dp x cp, expert ones over the
  // expert-data-parallel group.
  auto over_params = [&](double (*collective)(double, std::int64_t, const GroupLink&),
                         double bytes_per_param, const StageParameters& params) {
    return collective(bytes_per_param * params.dense, dp_ranks, dp_link) +
           collective(bytes_per_param * params.expert, edp_ranks, edp_link);
  };
  // Data-parallel traffic of one stage: the gradient reduction at the end of the step (`sync_s`,
  // which may overlap the last backward), the exposed part of that reduction by the closed form,
  // and exposure outside it (parameter gather before the next step, ZeRO-3 per micro-batch).
  struct DpTime {
    double sync_s = 0;
    double sync_exposed_s = 0;
    double other_exposed_s = 0;
  };
  auto dp_time = [&](const StageShape& shape, const StageParameters& params, const StageCost& sc) {
    const double g = kGradBytesPerParam, w16 = kWeightBytesPerParam;
    DpTime t;
    double gather_s = 0;
    if (p.zero == OptimizerSharding::none) {
      t.sync_s = over_params(all_reduce_time_s, g, params);
    } else if (p.zero != OptimizerSharding::zero3 || (p.pp > 1 && !p.reshard_after_forward)) {
      // ZeRO-1/2, and pipelined ZeRO-3 that keeps its weights gathered for the whole step
      // (memory_model.h's variant (c)): one gather and one reduce-scatter per step.
      t.sync_s = over_params(reduce_scatter_time_s, g, params);
      gather_s = over_params(all_gather_time_s, w16, params);
    } else {
      // Every micro-batch gathers the weights before forward and, when they were re-sharded after
      // it, again before backward (and for the recomputed forward), and reduce-scatters its
      // gradients, prefetched under compute; the first layer's gather cannot hide (Rajbhandari et
      // al. 2020 §5; Zhao et al. 2023, FSDP §3.3).
      const double gathers = !p.reshard_after_forward ? 1.0 : (p.recompute == Recompute::full ? 3.0 : 2.0);
      const double layers = std::max<double>(1.0, static_cast<double>(shape.layers));
      // The collectives run per layer (FSDP's wrapping unit), so each pays the ring's latency;
      // over_params counts one latency per whole-stage collective.
      const double ring_latency_s = static_cast<double>(dp_ranks - 1) * dp_link.latency_s;
      const double per_mb = gathers * over_params(all_gather_time_s, w16, params) +
                            over_params(reduce_scatter_time_s, g, params) +
                            (gathers + 1.0) * (layers - 1.0) * ring_latency_s;
      const double exposed_per_mb = p.overlap_param_gather
                                        ? std::max(0.0, per_mb - sc.total()) + per_mb / layers
                                        : per_mb;
      t.other_exposed_s = exposed_per_mb * static_cast<double>(microbatches);
      return t;
    }
    // Overlap: the gradient reduction hides under the last micro-batch's backward; the parameter
    // gather under the next iteration's first forward (Megatron-Core distributed optimizer).
    t.sync_exposed_s = p.overlap_grad_reduce ? std::max(0.0, t.sync_s - sc.bwd_s) : t.sync_s;
    t.other_exposed_s = p.overlap_param_gather ? std::max(0.0, gather_s - sc.fwd_s) : gather_s;
    return t;
  };
  auto optimizer_time = [&](const StageParameters& params) {
    const double local = p.zero == OptimizerSharding::none
                             ? params.total()
                             : params.dense / static_cast<double>(dp_ranks) +
                                   params.expert / static_cast<double>(edp_ranks);
    return memory_bound_time_s(kAdamStepBytesPerParam * local, c.gpu);
  };

  // One pass over the distinct stages: the first, those holding leading dense layers, one
  // representative of the identical middle stages (with its multiplicity), and the last.
  Estimate e;
  double sum_s = 0, max_s = 0, peak_bytes = -1, dp_exposed_s = 0, dp_other_s = 0, optimizer_s = 0;
  double sync_first = 0, sync_middle = 0, sync_last = 0;  // per representative stage, for the simulator
  StageCost worst{};
  auto visit = [&](std::int64_t s, double multiplicity) {
    const StageCost sc = stage_cost(s);
    const double t = sc.total();
    sum_s += multiplicity * t;
    if (t > max_s) {
      max_s = t;
      worst = sc;
    }
    const StageShape shape = stage_shape(s);
    const StageParameters params = stage_parameters(m, p, shape);
    const DpTime dp = dp_time(shape, params, sc);
    dp_exposed_s = std::max(dp_exposed_s, dp.sync_exposed_s + dp.other_exposed_s);
    dp_other_s = std::max(dp_other_s, dp.other_exposed_s);
    (s == 0 ? sync_first : s == pp - 1 ? sync_last : sync_middle) = dp.sync_s;
    optimizer_s = std::max(optimizer_s, optimizer_time(params));
    const MemoryBreakdown mem = stage_memory(m, p, w, shape);
    if (mem.total() > peak_bytes) {
      peak_bytes = mem.total();
      e.memory = mem;
      e.peak_memory_stage = static_cast<int>(s);
    }
  };
  for (std::int64_t s = 0; s < std::min(special_end, pp); ++s) visit(s, 1.0);
  const std::int64_t middle_count = pp - 1 - special_end;
  if (middle_count > 0) visit(special_end, static_cast<double>(middle_count));
  if (pp > 1) visit(pp - 1, 1.0);

  // Pipeline send/recv: each micro-batch's activation (split over tp by sequence parallelism or
  // Megatron's scatter/gather optimisation, SC'21 §4.1) crosses each stage boundary both ways.
  // Stage s holds ranks [s stride, (s+1) stride); its boundary to s+1 crosses a node when those
  // blocks sit in different nodes (NVLink inside a node, the NIC across).
  const std::int64_t pp_stride = p.tp * p.cp * p.dp;
  const std::int64_t node = c.gpus_per_node;
  const std::int64_t stages_per_node = pp_stride >= node ? 1 : node / pp_stride;
  double p2p_intra_s = 0, p2p_inter_s = 0, fill_p2p_s = 0, mean_p2p_s = 0;
  auto boundary_p2p = [&](std::int64_t s) {
    const bool crosses = stages_per_node == 1 || (s + 1) % stages_per_node == 0;
    return crosses ? p2p_inter_s : p2p_intra_s;
  };
  double pp_comm_s = 0;
  if (pp > 1) {
    const bool split_activation = p.p2p_scatter_gather || p.sequence_parallel;
    const double bytes = kB16 * T * h / (split_activation ? x.tp : 1.0);
    p2p_intra_s = p2p_time_s(bytes, {c.intra_node.bandwidth_bytes_per_s, c.intra_node.latency_s});
    p2p_inter_s = p2p_time_s(bytes, {c.inter_node.bandwidth_bytes_per_s, c.inter_node.latency_s});
    for (std::int64_t s = 0; s + 1 < pp; ++s) fill_p2p_s += boundary_p2p(s);
    mean_p2p_s = fill_p2p_s / static_cast<double>(pp - 1);
    // Fill and drain cross every boundary once each way.
    const double fill = 2.0 * fill_p2p_s;
    // Blocking p2p: a middle stage receives and sends once each way per micro-batch and chunk,
    // serialised with its compute (DeepSpeed PipelineEngine's RecvActivation / SendActivation /
    // RecvGrad / SendGrad instructions).
    const double steady = p.overlap_p2p ? 0.0 : 4.0 * static_cast<double>(p.vpp * microbatches) * mean_p2p_s;
    pp_comm_s = fill + steady;
  }
  const PipelineTimes pipe = pipeline_closed_form(sum_s, max_s, microbatches, p.vpp);

  const double mb = static_cast<double>(microbatches);
  e.time.compute_s = mb * worst.compute_s;
  e.time.recompute_s = mb * worst.recompute_s;
  e.time.tp_comm_s = mb * worst.tp_s;
  e.time.cp_comm_s = mb * worst.cp_s;
  e.time.ep_comm_s = mb * worst.ep_s;
  e.time.optimizer_s = optimizer_s;
  if (mode == PipelineModel::closed_form) {
    e.time.bubble_s = pipe.bubble_s;
    e.time.pp_comm_s = pp_comm_s;
    e.time.dp_comm_s = dp_exposed_s;
    e.iteration_time_s = pipe.makespan_s + pp_comm_s + dp_exposed_s + optimizer_s;
  } else {
    // The event-driven simulation of this plan's pipeline (schedule/pipeline_simulator.h) with
    // each virtual stage's costs, the p2p time per boundary and each stage's gradient sync.
    PipelineCosts& costs = simulation_costs();
    costs.schedule = p.vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
    costs.stages = static_cast<int>(pp);
    costs.microbatches = static_cast<int>(microbatches);
    costs.chunks = static_cast<int>(p.vpp);
    const std::size_t slots = static_cast<std::size_t>(virtual_stages * microbatches);
    costs.forward_s.resize(slots);
    costs.backward_s.resize(slots);
    costs.weight_s.clear();
    // Blocking p2p occupies the stage for a receive and a send around every op.
    const double blocking = p.overlap_p2p ? 0.0 : 2.0 * mean_p2p_s;
    for (std::int64_t k = 0; k < virtual_stages; ++k) {
      const StageCost chunk = chunk_cost(k);
      const auto first = costs.forward_s.begin() + k * microbatches;
      std::fill(first, first + microbatches, chunk.fwd_s + blocking);
      const auto firstb = costs.backward_s.begin() + k * microbatches;
      std::fill(firstb, firstb + microbatches, chunk.bwd_s + blocking);
    }
    costs.p2p_s.resize(static_cast<std::size_t>(pp));
    for (std::int64_t s = 0; s < pp; ++s)
      costs.p2p_s[static_cast<std::size_t>(s)] = boundary_p2p(s);  // s = pp - 1: the wrap to stage 0
    costs.dp_sync_s.resize(static_cast<std::size_t>(pp));
    for (std::int64_t s = 0; s < pp; ++s)
      costs.dp_sync_s[static_cast<std::size_t>(s)] = s == 0 ? sync_first : (s == pp - 1 ? sync_last : sync_middle);
    if (pp > 1 && special_end > 1) {
      // Stages holding leading dense layers: their own sync (rare; MoE models only).
      for (std::int64_t s = 1; s < std::min(special_end, pp - 1); ++s) {
        const StageShape shape = stage_shape(s);
        costs.dp_sync_s[static_cast<std::size_t>(s)] = dp_time(shape, stage_parameters(m, p, shape), stage_cost(s)).sync_s;
      }
    }
    costs.dp_sync_overlap = p.overlap_grad_reduce;
    double pipeline_s = 0;
    const double with_sync_s = timeline != nullptr ? simulate_into(costs, *timeline, pipeline_s)
                                                   : memoised_makespan(costs, pipeline_s);
    const double steady_s = mb * max_s;
    e.time.pp_comm_s = std::min(pp_comm_s, std::max(0.0, pipeline_s - steady_s));
    // Without a pipeline there is no bubble (the difference is rounding).
    e.time.bubble_s = pp > 1 ? std::max(0.0, pipeline_s - steady_s - e.time.pp_comm_s) : 0.0;
    e.time.dp_comm_s = (with_sync_s - pipeline_s) + dp_other_s;
    e.iteration_time_s = with_sync_s + dp_other_s + optimizer_s;
    if (inputs != nullptr) {
      inputs->costs = costs;
      inputs->tail_s = dp_other_s + optimizer_s;
    }
  }

  const double gpus = static_cast<double>(p.gpus());
  IterationFlops flops = iteration_flops(m, w.tokens(), w.seq_len, p.recompute);
  if (partial) {
    std::int64_t recomputed = 0;
    for (std::int64_t k = 0; k < virtual_stages; ++k)
      recomputed += p.recomputed_layers(split.virtual_stage_layers(k));
    flops.recompute *= static_cast<double>(recomputed) / static_cast<double>(m.layers);
  }
  e.model_flops = flops.model();
  e.hardware_flops = flops.hardware();
  e.tokens_per_s = w.tokens() / e.iteration_time_s;
  e.model_tflops_per_gpu = e.model_flops / (e.iteration_time_s * gpus) / units::kTera;
  e.hardware_tflops_per_gpu = e.hardware_flops / (e.iteration_time_s * gpus) / units::kTera;
  const double peak = c.gpu.peak_flops(x.fp8);
  e.mfu = e.model_flops / (e.iteration_time_s * gpus * peak);
  e.hfu = e.hardware_flops / (e.iteration_time_s * gpus * peak);
  e.peak_memory_bytes = peak_bytes;
  e.usable_memory_bytes = c.gpu.usable_memory_gib * units::kGiB;
  e.fits = peak_bytes <= e.usable_memory_bytes;
  return e;
}

}  // namespace

Estimate estimate(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                  const Workload& workload) {
  return estimate_with(model, cluster, plan, workload, PipelineModel::simulated, nullptr);
}

Estimate estimate_analytical(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                             const Workload& workload) {
  return estimate_with(model, cluster, plan, workload, PipelineModel::closed_form, nullptr);
}

Estimate estimate_with_timeline(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                                const Workload& workload, Timeline& timeline) {
  return estimate_with(model, cluster, plan, workload, PipelineModel::simulated, &timeline);
}

Estimate estimate_with_pipeline_inputs(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                                       const Workload& workload, PipelineInputs& inputs) {
  return estimate_with(model, cluster, plan, workload, PipelineModel::simulated, nullptr, &inputs);
}

}  // namespace tessera
