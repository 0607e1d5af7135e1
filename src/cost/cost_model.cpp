#include "cost/cost_model.h"
#include "cost/stage_memories.h"
#include "cost/stage_slice_cost.h"

#include <algorithm>
#include <cmath>

#include "cost/adapter_cost.h"
#include "cost/collective_cost.h"
#include "cost/eager_kernels.h"
#include "cost/compute_cost.h"
#include "cost/data_parallel_tail.h"
#include "cost/embedding_head_cost.h"
#include "cost/ep_overlap.h"
#include "cost/iteration_utilisation.h"
#include "cost/layer_cost.h"
#include "cost/layer_streaming.h"
#include "cost/memory_model.h"
#include "cost/memory_verdict.h"
#include "cost/offload_time.h"
#include "cost/pipeline_p2p.h"
#include "cost/pipeline_runs.h"
#include "cost/stage_cost.h"
#include "core/units.h"
#include "model/flops.h"
#include "model/parameter_count.h"
#include "schedule/pipeline_bubble.h"
#include "schedule/pipeline_simulator.h"

namespace tessera {

namespace {

// Adam step (fused multi-tensor): read fp32 param, grad, m, v; write param, m, v, 16-bit copy;
// plus the gradient-norm pass over the fp32 gradients.
constexpr double kAdamStepBytesPerParam = 4.0 * 4 + 4.0 * 3 + 2.0 + 4.0;

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

// Data-parallel traffic of one stage: the gradient reduction at the end of the step (`sync_s`,
// which may overlap the last backward), the exposed part of that reduction by the closed form,
// and exposure outside it (parameter gather before the next step, ZeRO-3 per micro-batch).
struct DpTime {
  double sync_s = 0;
  double sync_tail_s = 0;  // of sync_s, the embedding's bucket: ready only when the backward ends
  double sync_exposed_s = 0;
  double other_exposed_s = 0;
  double zero3_total_s = 0;  // ZeRO-3's per-micro-batch collectives, hidden or not (other_exposed_s: exposed)
};

// Everything one iteration's terms share: the plan's layer costs, layer split and groups. Its
// methods are the per-term functions of the iteration time; estimate_with composes them.
class IterationModel {
 public:
  IterationModel(const ModelSpec& m, const Cluster& c, const Plan& p, const Workload& w)
      : m(m), c(c), p(p), w(w),
        x(make_layer_context(m, c, p, w.seq_len,
                             static_cast<double>(p.micro_batch) * static_cast<double>(w.seq_len) / static_cast<double>(p.cp),
                             /*causal=*/true)),
        split(split_layers(p, m.layers)),
        partial(p.recompute == Recompute::full && p.recompute_layers > 0),
        microbatches(p.microbatches(w)),
        dp_ranks(p.dp * p.cp),
        edp_ranks(std::max<std::int64_t>(1, p.expert_dp())),
        dp_link(group_link(c, p.tp, dp_ranks)),
        edp_link(group_link(c, p.expert_tp() * p.ep, edp_ranks)) {
    dense_layer = m.dense_mlp_layers() > 0 ? layer_cost(x, false, p.recompute) : LayerCost{};
    moe_layer = m.is_moe() ? layer_cost(x, true, p.recompute) : LayerCost{};
    // Full recompute of only some layers: the others run as without recompute.
    dense_plain = partial && m.dense_mlp_layers() > 0 ? layer_cost(x, false, Recompute::none) : dense_layer;
    moe_plain = partial && m.is_moe() ? layer_cost(x, true, Recompute::none) : moe_layer;
    const double tp_one = p.tp > 1 ? all_reduce_time_s(units::kBytesBf16 * x.tokens * static_cast<double>(m.hidden), p.tp, x.tp_link) : 0.0;
    embed = embedding_cost(x, tp_one);
    head = output_head_cost(x, tp_one);
    // The first stage's embedding bucket (vocab-parallel: / tp; nothing when LoRA freezes it).
    embedding = embedding_bucket(p.tuning.adapters() ? 0.0 : count_parameters(m).embedding / static_cast<double>(p.tp),
                                 p.zero, dp_ranks, dp_link);
  }

  // Cost of one micro-batch on virtual stage k (chunk k / pp of physical stage k % pp): its
  // layers, the embedding on the first, the output layer, loss and MTP modules on the last.
  // Under EP overlap, the passes its stage runs unpaired expose their all-to-alls (cost/ep_overlap.h).
  StageCost chunk_cost(std::int64_t k) const {
    StageCost sc = range_cost(split.virtual_stage_start(k), split.virtual_stage_layers(k), k == 0,
                              k == split.virtual_stages - 1);
    if (p.overlap_ep) expose_unpaired_passes(sc, unpaired_pass_fraction(p.pp, p.vpp, k % p.pp, microbatches));
    return sc;
  }

  // Cost of one micro-batch through layers [start, start + length), with the embedding and / or
  // the output layer, loss and MTP modules (a chunk, or a stage cut freely: stage_slice_cost.h).
  StageCost range_cost(std::int64_t start, std::int64_t length, bool embedding, bool output_head) const {
    StageCost sc;
    const std::int64_t moe = m.moe_layers_in(start, start + length);
    // Megatron's block method recomputes the first N layers of the chunk.
    const std::int64_t recomputed = partial ? std::min(p.recompute_layers, length) : length;
    const std::int64_t moe_recomputed = m.moe_layers_in(start, start + recomputed);
    add_layers(sc, dense_layer, static_cast<double>(recomputed - moe_recomputed));
    add_layers(sc, dense_plain, static_cast<double>(length - moe - (recomputed - moe_recomputed)));
    add_layers(sc, moe_layer, static_cast<double>(moe_recomputed));
    add_layers(sc, moe_plain, static_cast<double>(moe - moe_recomputed));
    if (embedding) add_cost(sc, embed);
    if (output_head) {
      add_cost(sc, head);
      add_mtp_modules(sc);
    }
    return sc;
  }

  // Interleaved with unequal chunks: (pp - 1) x the slowest chunk (pipeline_bubble.h). The
  // slowest is the embedding's chunk, the head's, or a widest plain one: chunk 1, round 0 of
  // stage 1, whose lighter chunks (LayerSplit) come last.
  double chunk_bubble_s() const {
    if (p.vpp <= 1 || split.even()) return 0.0;
    double slowest = std::max(chunk_cost(0).total(), chunk_cost(split.virtual_stages - 1).total());
    slowest = std::max(slowest, chunk_cost(1).total());
    return static_cast<double>(p.pp - 1) * slowest;
  }

  StageCost stage_cost(std::int64_t s) const {
    StageCost sc;
    if (m.is_moe()) {
      for (std::int64_t k = s; k < split.virtual_stages; k += p.pp) add_cost(sc, chunk_cost(k));
      return sc;
    }
    // A dense chunk's cost depends only on its layer count and on holding the embedding or the
    // head: a stage's other chunks come in two sizes (LayerSplit::StageChunks), each costed once.
    // The planner visits millions of plans with up to ~60 chunks per stage.
    const LayerSplit::StageChunks chunks = split.stage_chunks(s);
    const StageCost wide = range_cost(0, chunks.widest, false, false);
    const StageCost narrow = chunks.light > 0 ? range_cost(0, chunks.widest - 1, false, false) : wide;
    for (std::int64_t r = 0, k = s; k < split.virtual_stages; ++r, k += p.pp) {
      const bool special = k == 0 || k == split.virtual_stages - 1;
      add_cost(sc, special ? chunk_cost(k) : chunks.layers(r) == chunks.widest ? wide : narrow);
    }
    return sc;
  }

  // Stages [0, special_end) are evaluated one by one: the first, the middle stages that hold a
  // layer fewer (LayerSplit::light_middles, right after the first), and those whose mix of dense
  // and MoE layers differs from the middle stages' (leading dense layers; an alternating pattern,
  // which can differ on every stage).
  std::int64_t special_end() const {
    const std::int64_t pp = p.pp;
    std::int64_t end = 1 + split.light_middles;
    if (!m.is_moe()) return end;
    if (m.moe.layer_freq > 1) end = std::max<std::int64_t>(end, pp - 1);
    const std::int64_t typical = pp > 2 ? moe_layers_on_stage(m, split, pp - 2, pp) : 0;
    while (end < pp - 1 && moe_layers_on_stage(m, split, end, pp) != typical) ++end;
    return end;
  }

  StageShape stage_shape(std::int64_t s) const {
    const std::int64_t pp = p.pp;
    StageShape shape;
    shape.layers = split.physical_stage_layers(s);
    shape.moe_layers = moe_layers_on_stage(m, split, s, pp);
    shape.framework = p.framework;
    shape.has_embedding = s == 0;
    shape.has_output_head = s == pp - 1;
    shape.recomputed_layers = 0;
    const LayerSplit::StageChunks chunks = split.stage_chunks(s);
    for (std::int64_t r = 0; r < p.vpp; ++r) shape.recomputed_layers += p.recomputed_layers(chunks.layers(r));
    // 1F1B holds p - s micro-batches on stage s; interleaving adds (p-1)/(p v) (Korthikanti §4.2.3).
    double inflight = static_cast<double>(std::min<std::int64_t>(pp - s, microbatches));
    if (p.vpp > 1) inflight *= 1.0 + static_cast<double>(pp - 1) / static_cast<double>(pp * p.vpp);
    shape.inflight_microbatches = inflight;
    return shape;
  }

  DpTime data_parallel_time(const StageShape& shape, const StageParameters& params, const StageCost& sc) const {
    const double g = kGradBytesPerParam;
    // Gradients (and ZeRO-1/2's gather of updated weights) cover only what is trained.
    const StageParameters trained = trained_parameters(shape, params);
    DpTime t;
    if (p.zero == OptimizerSharding::none) {
      t.sync_s = over_params(all_reduce_time_s, g, trained);
    } else if (p.zero == OptimizerSharding::zero3 && (p.pp == 1 || p.reshard_after_forward)) {
      const Zero3Time z = zero3_time(shape, params, sc);
      t.other_exposed_s = z.exposed_s;
      t.zero3_total_s = z.total_s;
      return t;
    } else {
      // ZeRO-1/2, and pipelined ZeRO-3 that keeps its weights gathered for the whole step
      // (memory_model.h's variant (c)): one reduce-scatter and one gather per step.
      t.sync_s = over_params(reduce_scatter_time_s, g, trained);
      const double gather_s = weight_gather_s(trained);
      t.other_exposed_s = p.overlap_param_gather ? std::max(0.0, gather_s - sc.fwd_s) : gather_s;
    }
    // The gradient reduction hides under the last micro-batch's backward; the parameter gather
    // under the next iteration's first forward (Megatron-Core distributed optimizer); neither
    // hides the embedding's bucket (cost/data_parallel_tail.h).
    t.sync_exposed_s = p.overlap_grad_reduce ? std::max(0.0, t.sync_s - sc.bwd_s) : t.sync_s;
    if (p.overlap_grad_reduce && shape.has_embedding) {
      t.sync_tail_s = std::min(embedding.reduce_s, t.sync_s);
      t.sync_exposed_s = std::max(t.sync_exposed_s, t.sync_tail_s);
      if (p.zero != OptimizerSharding::none && p.overlap_param_gather)
        t.other_exposed_s = std::max(t.other_exposed_s, embedding.gather_s);
    }
    return t;
  }

  StageParameters trained_parameters(const StageShape& shape, const StageParameters& params) const {
    if (!p.tuning.adapters()) return params;
    const TrainableState trained = trainable_state(m, p, shape, params);
    StageParameters out;
    out.dense = trained.dense;
    out.expert = trained.expert;
    out.layers = params.layers;
    return out;
  }

  // Parameters of this GPU's optimizer shard: those it trains (all, or LoRA's adapters), sharded
  // under ZeRO.
  double optimizer_params(const StageShape& shape, const StageParameters& params) const {
    const TrainableState trained = trainable_state(m, p, shape, params);
    return p.zero == OptimizerSharding::none ? trained.all()
                                             : trained.dense / static_cast<double>(dp_ranks) +
                                                   trained.expert / static_cast<double>(edp_ranks);
  }

  double optimizer_time(const StageShape& shape, const StageParameters& params) const {
    const double local = optimizer_params(shape, params);
    if (p.offload.optimizer != MemoryTier::gpu) return cpu_optimizer_step_s(p, c, local);
    if (p.framework == TrainingFramework::pytorch) {
      // Fused AdamW on fp32 parameters, and each later micro-batch's AccumulateGrad into the
      // fp32 gradients (Megatron accumulates inside its fused wgrad GEMMs).
      const double accumulations = static_cast<double>(std::max<std::int64_t>(0, microbatches - 1));
      const double grads = p.zero == OptimizerSharding::zero3 || p.zero == OptimizerSharding::zero2 ? local : trainable_state(m, p, shape, params).all();
      return memory_bound_time_s(kEagerAdamStepBytesPerParam * local + kEagerGradAccumulateBytesPerParam * accumulations * grads, c.gpu);
    }
    return memory_bound_time_s(kAdamStepBytesPerParam * local, c.gpu);
  }

  // The offloaded state's CPU step and exposed copies (cost/offload_time.h) for a stage.
  double offload_exposed(const StageShape& shape, const StageParameters& params, const StageCost& sc) const {
    if (!p.offload.any_offload()) return 0.0;
    OffloadShares shares;
    shares.optimizer_params = optimizer_params(shape, params);
    shares.weight_shard_params = p.framework == TrainingFramework::megatrain
                                     ? streamed_layer_params(m)
                                     : params.dense / static_cast<double>(dp_ranks) + params.expert / static_cast<double>(edp_ranks);
    if (p.offload.activations != MemoryTier::gpu) shares.activation_bytes_per_microbatch = activation_bytes_per_microbatch(m, p, w, shape);
    return offload_exposed_s(p, c, offload_traffic(p, shares, sc.total(), sc.bwd_s, static_cast<double>(microbatches)));
  }

  const ModelSpec& m;
  const Cluster& c;
  const Plan& p;
  const Workload& w;
  const LayerContext x;
  const LayerSplit split;
  const bool partial;
  const std::int64_t microbatches;

 private:
  // Multi-token prediction modules follow the last layer on the last stage (Megatron-Core
  // multi_token_prediction.py): a 2h -> h projection, one layer of the last layer's kind, and
  // their own pass through the shared output head and loss.
  void add_mtp_modules(StageCost& sc) const {
    if (m.mtp_layers <= 0) return;
    const double h = static_cast<double>(m.hidden);
    add_layers(sc, m.is_moe_layer(m.layers - 1) ? moe_layer : dense_layer, static_cast<double>(m.mtp_layers));
    StageCost mtp_head = head;
    const double projection = gemm_time_s(x.tokens, h / x.tp, 2.0 * h, 1.0, c.gpu, x.fp8);
    mtp_head.compute_s += projection * (1.0 + kGemmBackwardOverForward);
    mtp_head.fwd_s += projection;
    mtp_head.bwd_s += projection * kGemmBackwardOverForward;
    for (std::int64_t i = 0; i < m.mtp_layers; ++i) add_cost(sc, mtp_head);
  }

  // Collectives over a stage's parameters: dense ones over dp x cp, expert ones over the
  // expert-data-parallel group.
  double over_params(double (*collective)(double, std::int64_t, const GroupLink&), double bytes_per_param,
                     const StageParameters& params) const {
    return collective(bytes_per_param * params.dense, dp_ranks, dp_link) +
           collective(bytes_per_param * params.expert, edp_ranks, edp_link);
  }

  // One all-gather of a stage's weights: 16-bit, but FP8 for the linear layers' weights under
  // --fp8-param-gather (Megatron's distributed optimizer and Megatron-FSDP gather the FP8
  // parameter itself; the memory side, memory_model.cpp, counts the same 1 byte).
  double weight_gather_s(const StageParameters& params) const {
    const bool fp8 = p.precision == Precision::fp8 && p.fp8_param_gather;
    const double gemm_bytes = fp8 ? units::kBytesFp8 : kWeightBytesPerParam;
    auto bytes = [&](double all, double gemm) { return kWeightBytesPerParam * (all - gemm) + gemm_bytes * gemm; };
    return all_gather_time_s(bytes(params.dense, params.gemm_dense), dp_ranks, dp_link) +
           all_gather_time_s(bytes(params.expert, params.gemm_expert), edp_ranks, edp_link);
  }

  // ZeRO-3 that gathers per micro-batch: the weights before forward and, when they were
  // re-sharded after it, again before backward. A recomputed forward reuses the backward's gather
  // in Megatron-FSDP (it gathers "once for both the recomputation and backward computation",
  // megatron_fsdp.py @ d98e8a64) and FSDP2 (no pre-forward unshard in PRE_BACKWARD, _fsdp_state.py);
  // DeepSpeed's engines are priced as the published ZeRO-3 runs ran (SC'21 Table 2: iteration
  // time flat from 768 to 1,536 GPUs, communication-bound), a third gather with full recompute and
  // no prefetch (as_run_by_framework). Gradients are reduce-scattered every micro-batch, even under
  // accumulation; prefetched gathers hide under compute on their own streams, but the first
  // layer's cannot (Rajbhandari et al. 2020 §5; Zhao et al. 2023, FSDP §3.3), nor, on the first
  // stage, the embedding's when it is the larger (cost/data_parallel_tail.h).
  struct Zero3Time {
    double total_s = 0, exposed_s = 0;
  };
  Zero3Time zero3_time(const StageShape& shape, const StageParameters& params, const StageCost& sc) const {
    const bool regather_for_recompute = deepspeed_engine(p.framework) && p.recompute == Recompute::full;
    const double gathers = !p.reshard_after_forward ? 1.0 : (regather_for_recompute ? 3.0 : 2.0);
    const double layers = std::max<double>(1.0, static_cast<double>(shape.layers));
    // The collectives run per layer (FSDP's wrapping unit), so each pays the ring's latency;
    // over_params counts one latency per whole-stage collective.
    const double ring_latency_s = static_cast<double>(dp_ranks - 1) * dp_link.latency_s;
    const double per_mb = gathers * weight_gather_s(params) +
                          over_params(reduce_scatter_time_s, kGradBytesPerParam, trained_parameters(shape, params)) +
                          (gathers + 1.0) * (layers - 1.0) * ring_latency_s;
    const double first_unit_s =
        shape.has_embedding ? std::max(per_mb / layers, embedding.gather_s + embedding.reduce_s) : per_mb / layers;
    const double exposed_per_mb = p.overlap_param_gather ? std::max(0.0, per_mb - sc.total()) + first_unit_s : per_mb;
    const double mb = static_cast<double>(microbatches);
    return {per_mb * mb, exposed_per_mb * mb};
  }

  const std::int64_t dp_ranks;   // gradients are reduced over dp x cp
  const std::int64_t edp_ranks;  // expert gradients over the expert-data-parallel ranks
  const GroupLink dp_link, edp_link;
  LayerCost dense_layer, moe_layer, dense_plain, moe_plain;
  StageCost embed, head;
  EmbeddingBucket embedding;
};

// The stages' per-micro-batch times, data-parallel and optimizer terms and peak memory, from one
// pass over the distinct stages: the first, those whose layer mix differs, one representative
// of the identical middle stages (with its multiplicity), and the last.
struct StageTotals {
  double sum_s = 0, max_s = 0;
  StageCost worst;
  double dp_exposed_s = 0, dp_other_s = 0, optimizer_s = 0, offload_s = 0;
  double zero3_total_s = 0;
  double host_bytes = 0, nvme_bytes = 0;  // offloaded state per GPU, the most of any stage
  double sync_first_s = 0, sync_middle_s = 0, sync_last_s = 0;  // per representative stage
  double sync_tail_first_s = 0;  // the first stage's embedding bucket (no other stage holds one)
  double peak_bytes = -1;
  MemoryBreakdown memory;
  int peak_stage = 0;
};

StageTotals visit_stages(const IterationModel& it, std::int64_t special_end) {
  const std::int64_t pp = it.p.pp;
  StageTotals t;
  auto visit = [&](std::int64_t s, double multiplicity) -> double {
    const StageCost sc = it.stage_cost(s);
    t.sum_s += multiplicity * sc.total();
    if (sc.total() > t.max_s) {
      t.max_s = sc.total();
      t.worst = sc;
    }
    const StageShape shape = it.stage_shape(s);
    const StageParameters params = stage_parameters(it.m, it.p, shape);
    const DpTime dp = it.data_parallel_time(shape, params, sc);
    t.dp_exposed_s = std::max(t.dp_exposed_s, dp.sync_exposed_s + dp.other_exposed_s);
    t.dp_other_s = std::max(t.dp_other_s, dp.other_exposed_s);
    t.zero3_total_s = std::max(t.zero3_total_s, dp.zero3_total_s);
    (s == 0 ? t.sync_first_s : s == pp - 1 ? t.sync_last_s : t.sync_middle_s) = dp.sync_s;
    if (s == 0) t.sync_tail_first_s = dp.sync_tail_s;
    t.optimizer_s = std::max(t.optimizer_s, it.optimizer_time(shape, params));
    t.offload_s = std::max(t.offload_s, it.offload_exposed(shape, params, sc));
    const MemoryBreakdown mem = stage_memory(it.m, it.p, it.w, shape, it.c.gpu);
    t.host_bytes = std::max(t.host_bytes, mem.host_bytes);
    t.nvme_bytes = std::max(t.nvme_bytes, mem.nvme_bytes);
    if (mem.total() > t.peak_bytes) {
      t.peak_bytes = mem.total();
      t.memory = mem;
      t.peak_stage = static_cast<int>(s);
    }
    return sc.total();
  };
  // A dense model's light middle stages (1 .. special_end - 1) differ only in their in-flight
  // micro-batches, which fall with s: after the first, each adds its time to the sum (one by
  // one, as visiting it would) and nothing else — equal DP, optimizer and sync terms, a smaller
  // memory peak. The planner costs millions of plans; visiting each is most of their time.
  const std::int64_t visited_end = std::min(special_end, pp);
  const std::int64_t distinct_end = it.m.is_moe() ? visited_end : std::min<std::int64_t>(2, visited_end);
  double light_middle_s = 0;
  for (std::int64_t s = 0; s < distinct_end; ++s) light_middle_s = visit(s, 1.0);
  for (std::int64_t s = distinct_end; s < visited_end; ++s) t.sum_s += light_middle_s;
  const std::int64_t middle_count = pp - 1 - special_end;
  if (middle_count > 0) visit(special_end, static_cast<double>(middle_count));
  if (pp > 1) visit(pp - 1, 1.0);
  return t;
}

// The simulator's inputs for this plan: each virtual stage's forward / backward per micro-batch,
// the p2p time per stage boundary and each stage's gradient sync.
void fill_simulation_costs(const IterationModel& it, const StageTotals& stages, const PipelineP2p& p2p,
                           std::int64_t special_end, PipelineCosts& costs) {
  const Plan& p = it.p;
  const std::int64_t pp = p.pp, mb = it.microbatches;
  costs.schedule = p.vpp > 1 ? Schedule::interleaved : Schedule::one_f_one_b;
  costs.stages = static_cast<int>(pp);
  costs.microbatches = static_cast<int>(mb);
  costs.chunks = static_cast<int>(p.vpp);
  const std::size_t slots = static_cast<std::size_t>(it.split.virtual_stages * mb);
  costs.forward_s.resize(slots);
  costs.backward_s.resize(slots);
  costs.weight_s.clear();
  // Blocking p2p occupies the stage for a receive and a send around every op.
  const double blocking = p.overlap_p2p ? 0.0 : 2.0 * p2p.mean_s;
  for (std::int64_t k = 0; k < it.split.virtual_stages; ++k) {
    const StageCost chunk = it.chunk_cost(k);
    std::fill(costs.forward_s.begin() + k * mb, costs.forward_s.begin() + (k + 1) * mb, chunk.fwd_s + blocking);
    std::fill(costs.backward_s.begin() + k * mb, costs.backward_s.begin() + (k + 1) * mb, chunk.bwd_s + blocking);
  }
  costs.p2p_s.resize(static_cast<std::size_t>(pp));
  for (std::int64_t s = 0; s < pp; ++s) costs.p2p_s[static_cast<std::size_t>(s)] = p2p.boundary_s(s);  // pp - 1: the wrap
  costs.dp_sync_s.resize(static_cast<std::size_t>(pp));
  for (std::int64_t s = 0; s < pp; ++s)
    costs.dp_sync_s[static_cast<std::size_t>(s)] =
        s == 0 ? stages.sync_first_s : (s == pp - 1 ? stages.sync_last_s : stages.sync_middle_s);
  // Stages whose layer mix differs from the middle ones: their own sync (MoE models only).
  // A dense model's are its light middles, all alike (visit_stages): one is costed.
  for (std::int64_t s = 1; s < std::min(special_end, pp - 1); ++s) {
    if (!it.m.is_moe() && s > 1) {
      costs.dp_sync_s[static_cast<std::size_t>(s)] = costs.dp_sync_s[1];
      continue;
    }
    const StageShape shape = it.stage_shape(s);
    costs.dp_sync_s[static_cast<std::size_t>(s)] =
        it.data_parallel_time(shape, stage_parameters(it.m, p, shape), it.stage_cost(s)).sync_s;
  }
  costs.dp_sync_tail_s.assign(static_cast<std::size_t>(pp), 0.0);
  costs.dp_sync_tail_s[0] = stages.sync_tail_first_s;
  costs.dp_sync_overlap = p.overlap_grad_reduce;
}

// Both paths: everything but the pipeline term is shared.
Estimate estimate_with(const ModelSpec& m, const Cluster& c, const Plan& asked, const Workload& w,
                       PipelineModel mode, Timeline* timeline, PipelineInputs* inputs = nullptr) {
  const Plan p = as_run_by_framework(asked);
  const IterationModel it(m, c, p, w);
  const std::int64_t special_end = it.special_end();
  const StageTotals stages = visit_stages(it, special_end);
  const PipelineP2p p2p = pipeline_p2p(p, c, it.x.tokens, it.x.tp, m.hidden, it.microbatches);

  Estimate e;
  const double mb = static_cast<double>(it.microbatches);
  e.time.compute_s = mb * stages.worst.compute_s;
  e.time.recompute_s = mb * stages.worst.recompute_s;
  e.time.tp_comm_s = mb * stages.worst.tp_s;
  e.time.cp_comm_s = mb * stages.worst.cp_s;
  e.time.ep_comm_s = mb * stages.worst.ep_s;
  e.overlap.ep_total_s = mb * stages.worst.ep_total_s;
  e.overlap.ep_exposed_s = e.time.ep_comm_s;
  e.overlap.zero3_total_s = stages.zero3_total_s;
  e.overlap.zero3_exposed_s = stages.zero3_total_s > 0 ? stages.dp_other_s : 0.0;
  e.time.optimizer_s = stages.optimizer_s;
  e.time.offload_s = stages.offload_s;
  if (mode == PipelineModel::closed_form) {
    const PipelineTimes pipe = pipeline_closed_form(stages.sum_s, stages.max_s, it.microbatches, p.vpp, it.chunk_bubble_s());
    e.time.bubble_s = pipe.bubble_s;
    e.time.pp_comm_s = p2p.exposed_s;
    e.time.dp_comm_s = stages.dp_exposed_s;
    e.iteration_time_s = pipe.makespan_s + p2p.exposed_s + stages.dp_exposed_s + stages.optimizer_s + stages.offload_s;
  } else {
    // The event-driven simulation of this plan's pipeline (schedule/pipeline_simulator.h).
    PipelineCosts& costs = thread_simulation_costs();
    fill_simulation_costs(it, stages, p2p, special_end, costs);
    double pipeline_s = 0;
    const double with_sync_s = timeline != nullptr ? simulate_into(costs, *timeline, pipeline_s)
                                                   : memoised_makespan(costs, pipeline_s);
    const double steady_s = mb * stages.max_s;
    e.time.pp_comm_s = std::min(p2p.exposed_s, std::max(0.0, pipeline_s - steady_s));
    // Without a pipeline there is no bubble (the difference is rounding).
    e.time.bubble_s = p.pp > 1 ? std::max(0.0, pipeline_s - steady_s - e.time.pp_comm_s) : 0.0;
    e.time.dp_comm_s = (with_sync_s - pipeline_s) + stages.dp_other_s;
    e.iteration_time_s = with_sync_s + stages.dp_other_s + stages.optimizer_s + stages.offload_s;
    if (inputs != nullptr) {
      inputs->costs = costs;
      inputs->tail_s = stages.dp_other_s + stages.optimizer_s + stages.offload_s;
    }
  }
  set_flops_and_utilisation(e, it.m, it.p, it.w, it.split, it.c.gpu);
  e.memory = stages.memory;
  e.peak_memory_stage = stages.peak_stage;
  e.peak_memory_bytes = stages.peak_bytes;
  e.usable_memory_bytes = c.gpu.usable_memory_gib * units::kGiB;
  set_memory_verdict(e, c, stages.host_bytes, stages.nvme_bytes);
  return e;
}

}  // namespace

std::vector<MemoryBreakdown> stage_memories(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                                            const Workload& workload) {
  const IterationModel it(model, cluster, plan, workload);
  std::vector<MemoryBreakdown> out;
  out.reserve(static_cast<std::size_t>(plan.pp));
  for (std::int64_t s = 0; s < plan.pp; ++s)
    out.push_back(stage_memory(model, plan, workload, it.stage_shape(s), cluster.gpu));
  return out;
}

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

namespace tessera {

// The IterationModel runs on a copy of the plan with pp = 1 (its Megatron split is then trivial
// and never throws); memory terms use the plan as given (pp = the whole pipeline).
struct StageSliceCoster::State {
  State(const ModelSpec& model, const Cluster& cluster, const Plan& plan, const Workload& workload)
      : m(model), c(cluster), p(as_run_by_framework(plan)), single(p), w(workload), it(m, c, single_stage(single), w) {}
  static const Plan& single_stage(Plan& plan) {
    plan.pp = 1;
    plan.vpp = 1;
    plan.first_stage_layers = 0;
    plan.last_stage_layers = 0;
    plan.account_embedding = plan.account_loss = false;
    return plan;
  }
  StageShape shape(const StageSlice& slice) const {
    StageShape s;
    s.layers = slice.layers;
    s.moe_layers = m.moe_layers_in(slice.first_layer, slice.first_layer + slice.layers);
    s.framework = p.framework;
    s.has_embedding = slice.has_embedding;
    s.has_output_head = slice.has_output_head;
    s.recomputed_layers = p.recomputed_layers(slice.layers);
    s.inflight_microbatches = slice.inflight_microbatches;
    return s;
  }
  const ModelSpec m;
  const Cluster c;
  const Plan p;
  Plan single;
  const Workload w;
  const IterationModel it;
};

StageSliceCoster::StageSliceCoster(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                                   const Workload& workload)
    : state_(std::make_unique<State>(model, cluster, plan, workload)) {}
StageSliceCoster::~StageSliceCoster() = default;
StageSliceCoster::StageSliceCoster(StageSliceCoster&&) noexcept = default;
StageSliceCoster& StageSliceCoster::operator=(StageSliceCoster&&) noexcept = default;

StageSliceCost StageSliceCoster::cost(const StageSlice& slice) const {
  const State& s = *state_;
  const StageCost sc = s.it.range_cost(slice.first_layer, slice.layers, slice.has_embedding, slice.has_output_head);
  const StageShape shape = s.shape(slice);
  const StageParameters params = stage_parameters(s.m, s.p, shape);
  const DpTime dp = s.it.data_parallel_time(shape, params, sc);
  StageSliceCost out;
  out.forward_s = sc.fwd_s;
  out.backward_s = sc.bwd_s;
  out.dp_sync_s = dp.sync_s;
  out.dp_sync_tail_s = dp.sync_tail_s;
  out.dp_other_s = dp.other_exposed_s;
  out.optimizer_s = s.it.optimizer_time(shape, params);
  out.memory = stage_memory(s.m, s.p, s.w, shape, s.c.gpu);
  return out;
}

double StageSliceCoster::memory_bytes(const StageSlice& slice) const {
  const State& s = *state_;
  return stage_memory(s.m, s.p, s.w, s.shape(slice), s.c.gpu).total();
}

}  // namespace tessera
