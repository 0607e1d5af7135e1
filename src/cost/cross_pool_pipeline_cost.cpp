#include "cost/cross_pool_pipeline_cost.h"

#include <algorithm>

#include "core/units.h"
#include "cost/collective_cost.h"
#include "model/flops.h"

namespace tessera {

namespace {

// The activation one micro-batch sends forward (and its gradient backward): b x s x h in bf16.
double boundary_activation_bytes(const ModelSpec& model, const Plan& plan, const Workload& workload) {
  return units::kBytesBf16 * static_cast<double>(plan.micro_batch) * static_cast<double>(workload.seq_len) *
         static_cast<double>(model.hidden);
}

double tail_of(const CrossPoolPipelineInputs& inputs) {
  double other = 0, optimizer = 0;
  for (const auto& s : inputs.stages) {
    other = std::max(other, s.dp_other_s);
    optimizer = std::max(optimizer, s.optimizer_s);
  }
  return other + optimizer;
}

void fill_costs(const CrossPoolPipelineInputs& inputs, PipelineCosts& costs) {
  const std::size_t p = inputs.stages.size();
  const std::size_t m = static_cast<std::size_t>(inputs.microbatches);
  costs.schedule = Schedule::one_f_one_b;
  costs.stages = static_cast<int>(p);
  costs.microbatches = static_cast<int>(m);
  costs.chunks = 1;
  costs.forward_s.resize(p * m);
  costs.backward_s.resize(p * m);
  costs.weight_s.clear();
  costs.dp_sync_s.resize(p);
  costs.dp_sync_tail_s.resize(p);
  for (std::size_t s = 0; s < p; ++s) {
    std::fill_n(costs.forward_s.begin() + static_cast<std::ptrdiff_t>(s * m), m, inputs.stages[s].forward_s);
    std::fill_n(costs.backward_s.begin() + static_cast<std::ptrdiff_t>(s * m), m, inputs.stages[s].backward_s);
    costs.dp_sync_s[s] = inputs.stages[s].dp_sync_s;
    costs.dp_sync_tail_s[s] = inputs.stages[s].dp_sync_tail_s;
  }
  costs.p2p_s = inputs.p2p_s;
  costs.dp_sync_overlap = inputs.overlap_grad_reduce;
}

// Stage costs, p2p and per-stage estimates of a validated plan.
CrossPoolPipelineInputs build_inputs(const ModelSpec& model, const MixedCluster& cluster, const CrossPoolPlan& plan,
                                     const Workload& workload, std::vector<CrossPoolStageEstimate>* stages) {
  CrossPoolPipelineInputs in;
  in.microbatches = plan.base.microbatches(workload);
  in.overlap_grad_reduce = plan.base.overlap_grad_reduce;
  const std::int64_t total = plan.stages();
  const double boundary = cross_pool_boundary_s(model, cluster, plan.base, workload);
  std::int64_t stage = 0, layer = 0;
  for (std::size_t g = 0; g < plan.segments.size(); ++g) {
    const PipelineSegment& seg = plan.segments[g];
    const Cluster& pool = cluster.pools[seg.pool];
    const Plan sp = segment_plan(plan, seg);
    const StageSliceCoster coster(model, pool, sp, workload);
    for (std::int64_t i = 0; i < seg.stages; ++i, ++stage) {
      StageSlice slice;
      slice.first_layer = layer;
      slice.layers = segment_stage_layers(seg, i);
      slice.has_embedding = stage == 0;
      slice.has_output_head = stage == total - 1;
      slice.inflight_microbatches = static_cast<double>(std::min(total - stage, in.microbatches));
      in.stages.push_back(coster.cost(slice));
      const bool last_of_segment = i == seg.stages - 1;
      in.p2p_s.push_back(stage == total - 1 ? 0.0
                         : last_of_segment  ? boundary
                                            : within_pool_boundary_s(model, pool, sp, workload, i));
      if (stages != nullptr) {
        CrossPoolStageEstimate e;
        e.pool = seg.pool;
        e.tp = seg.tp;
        e.first_layer = layer;
        e.layers = slice.layers;
        e.forward_s = in.stages.back().forward_s;
        e.backward_s = in.stages.back().backward_s;
        e.dp_sync_s = in.stages.back().dp_sync_s;
        e.peak_memory_bytes = in.stages.back().memory.total();
        e.usable_memory_bytes = pool.gpu.usable_memory_gib * units::kGiB;
        e.fits = e.peak_memory_bytes <= e.usable_memory_bytes;
        stages->push_back(e);
      }
      layer += slice.layers;
    }
  }
  return in;
}

}  // namespace

double within_pool_boundary_s(const ModelSpec& model, const Cluster& pool, const Plan& segment_plan,
                              const Workload& workload, std::int64_t local) {
  // Ranks are tp innermost, then dp, stages outermost: a stage spans dp x tp consecutive ranks,
  // and its boundary to the next stage crosses a node unless both sit in the same node.
  const std::int64_t stride = segment_plan.tp * segment_plan.dp;
  const std::int64_t stages_per_node = stride >= pool.gpus_per_node ? 1 : pool.gpus_per_node / stride;
  const bool crosses = stages_per_node == 1 || (local + 1) % stages_per_node == 0;
  const LinkTier& tier = crosses ? pool.inter_node : pool.intra_node;
  const bool split = segment_plan.p2p_scatter_gather || segment_plan.sequence_parallel;
  const double bytes = boundary_activation_bytes(model, segment_plan, workload) /
                       (split ? static_cast<double>(segment_plan.tp) : 1.0);
  return p2p_time_s(bytes, {tier.bandwidth_bytes_per_s, tier.latency_s});
}

double cross_pool_boundary_s(const ModelSpec& model, const MixedCluster& cluster, const Plan& base,
                             const Workload& workload) {
  const double bytes = static_cast<double>(base.dp) * boundary_activation_bytes(model, base, workload);
  return p2p_time_s(bytes, {cluster.inter_pool.bandwidth_bytes_per_s, cluster.inter_pool.latency_s});
}

double cross_pool_lower_bound_s(const CrossPoolPipelineInputs& inputs) {
  double busiest = 0;
  for (const auto& s : inputs.stages) busiest = std::max(busiest, s.forward_s + s.backward_s);
  return static_cast<double>(inputs.microbatches) * busiest + tail_of(inputs);
}

double simulate_cross_pool(const CrossPoolPipelineInputs& inputs, PipelineSimulator& simulator, PipelineCosts& costs,
                           double* pipeline_s) {
  fill_costs(inputs, costs);
  return simulator.makespan(costs, pipeline_s) + tail_of(inputs);
}

CrossPoolEstimate estimate_cross_pool(const ModelSpec& model, const MixedCluster& cluster, const CrossPoolPlan& plan,
                                      const Workload& workload) {
  CrossPoolEstimate e;
  const CrossPoolPipelineInputs in = build_inputs(model, cluster, plan, workload, &e.stages);
  PipelineSimulator simulator;
  PipelineCosts costs;
  e.iteration_time_s = simulate_cross_pool(in, simulator, costs, &e.pipeline_s);
  e.tail_s = tail_of(in);
  e.dp_sync_s = e.iteration_time_s - e.tail_s - e.pipeline_s;
  double busiest = 0;
  for (const auto& s : in.stages) busiest = std::max(busiest, s.forward_s + s.backward_s);
  e.steady_s = static_cast<double>(in.microbatches) * busiest;
  e.bubble_s = std::max(0.0, e.pipeline_s - e.steady_s);
  e.boundary_p2p_s = cross_pool_boundary_s(model, cluster, plan.base, workload);
  e.tokens_per_s = workload.tokens() / e.iteration_time_s;
  e.model_flops = iteration_flops(model, workload.tokens(), workload.seq_len, plan.base.recompute).model();
  double peak = 0;
  for (const auto& seg : plan.segments)
    peak += static_cast<double>(cluster.pools[seg.pool].gpus()) *
            cluster.pools[seg.pool].gpu.peak_flops(false);
  e.mfu = e.model_flops / (e.iteration_time_s * peak);
  e.fits = std::all_of(e.stages.begin(), e.stages.end(), [](const CrossPoolStageEstimate& s) { return s.fits; });
  return e;
}

Timeline cross_pool_timeline(const ModelSpec& model, const MixedCluster& cluster, const CrossPoolPlan& plan,
                             const Workload& workload) {
  const CrossPoolPipelineInputs in = build_inputs(model, cluster, plan, workload, nullptr);
  PipelineCosts costs;
  fill_costs(in, costs);
  PipelineSimulator simulator;
  return simulator.run(costs);
}

}  // namespace tessera
