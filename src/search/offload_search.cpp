#include "search/offload_search.h"

#include <algorithm>
#include <string>

#include "core/error.h"
#include "search/framework_support.h"

namespace tessera {

namespace {
constexpr MemoryTier kGpu = MemoryTier::gpu, kCpu = MemoryTier::cpu, kNvme = MemoryTier::nvme;

bool any_pinned(const PlanConstraints& fix) {
  return fix.offload_optimizer || fix.offload_params || fix.offload_activations;
}

// The search space of one placement: the shardings and recompute the framework needs for it
// (plan/memory_tiers.cpp), unless pinned.
PlanConstraints with_placement(PlanConstraints fix, const StatePlacement& placement) {
  fix.defaults.offload = placement;
  const TrainingFramework f = fix.defaults.framework;
  const bool fsdp_offload = !deepspeed_engine(f) && f != TrainingFramework::megatron && f != TrainingFramework::megatrain &&
                            (placement.optimizer != kGpu || placement.params != kGpu);
  const bool needs_zero3 = placement.params != kGpu || placement.optimizer == kNvme || fsdp_offload;
  if (!fix.zero) {
    if (needs_zero3) fix.zero_choices = {OptimizerSharding::zero3};
    else if (placement.optimizer != kGpu && (deepspeed_engine(f) || f == TrainingFramework::megatron))
      fix.zero_choices = {OptimizerSharding::zero1, OptimizerSharding::zero3};
  }
  if (deepspeed_engine(f) && placement.activations == kCpu && !fix.recompute) fix.recompute = Recompute::full;
  // Megatron's activation offload runs on one stage without recomputation, and its CPU optimizer
  // gathers FP8 parameters only under the delayed recipe (plan/memory_tiers.cpp).
  if (f == TrainingFramework::megatron && placement.activations == kCpu) {
    if (!fix.pp) fix.pp = 1;
    if (!fix.recompute) fix.recompute = Recompute::none;
  }
  if (f == TrainingFramework::megatron && placement.optimizer == kCpu && !fix.fp8_param_gather) fix.fp8_param_gather = false;
  return fix;
}

// A plan of the search space with its placement, sharding and recompute, for check_offload.
Plan probe_plan(const PlanConstraints& fix) {
  Plan probe = fix.defaults;
  probe.zero = fix.zero ? *fix.zero : (fix.zero_choices.empty() ? probe.zero : fix.zero_choices.front());
  if (fix.recompute) probe.recompute = *fix.recompute;
  return probe;
}

// Whether the framework can run the placement on this cluster.
bool runnable(const PlanConstraints& fix, const Cluster& cluster) {
  try {
    check_offload(probe_plan(fix), cluster);
    return true;
  } catch (const Error&) {
    return false;
  }
}

void merge_into(PlanSearch& into, const PlanSearch& from, std::size_t top_k) {
  into.plans.insert(into.plans.end(), from.plans.begin(), from.plans.end());
  std::stable_sort(into.plans.begin(), into.plans.end(), [](const RankedPlan& a, const RankedPlan& b) {
    return a.estimate.iteration_time_s < b.estimate.iteration_time_s;
  });
  if (into.plans.size() > top_k) into.plans.resize(top_k);
  into.evaluated += from.evaluated;
  into.feasible += from.feasible;
  into.search_time_s += from.search_time_s;
  into.invalid += from.invalid;
  into.aliases += from.aliases;
}

OffloadStep step_of(const StatePlacement& placement, const PlanSearch& s) {
  return {placement, s.min_peak_memory_bytes, s.feasible};
}
}  // namespace

std::vector<StatePlacement> offload_ladder(TrainingFramework f) {
  if (f == TrainingFramework::megatron) return {{kCpu, kGpu, kGpu}, {kCpu, kGpu, kCpu}};
  if (deepspeed_engine(f))
    return {{kCpu, kGpu, kGpu}, {kCpu, kGpu, kCpu}, {kCpu, kCpu, kGpu}, {kNvme, kCpu, kGpu}, {kNvme, kNvme, kGpu}};
  if (f == TrainingFramework::pytorch) return {{kCpu, kCpu, kGpu}, {kCpu, kCpu, kCpu}};
  return {{kCpu, kCpu, kGpu}};
}

OffloadSearch search_plans_with_offload(const ModelSpec& model, const Cluster& cluster, const Workload& workload,
                                        const PlanConstraints& fix, const PlannerOptions& options) {
  OffloadSearch out;
  check_fine_tuning(fix.defaults, model);  // what every candidate trains: the user's choice, checked once
  if (fix.defaults.framework == TrainingFramework::megatrain) {
    // MegaTrain keeps parameters and the optimizer in host memory by design: its placement
    // (search/framework_support.cpp), not a step of the ladder. One GPU (plan.cpp check_megatrain).
    if (cluster.gpus() != 1)
      throw Error("--cluster", "framework megatrain is modelled on one GPU (" + std::to_string(cluster.gpus()) + " given)",
                  "a one-GPU cluster, e.g. h200:1");
    check_offload(probe_plan(framework_constraints(model, fix)), cluster);  // a pinned gpu tier names its key
    out.search = search_plans(model, cluster, workload, fix, options);
    return out;
  }
  if (any_pinned(fix)) {
    const StatePlacement pinned{fix.offload_optimizer.value_or(kGpu), fix.offload_params.value_or(kGpu),
                                fix.offload_activations.value_or(kGpu)};
    const PlanConstraints placed = with_placement(fix, pinned);
    check_offload(probe_plan(placed), cluster);  // a pinned tier the framework or cluster lacks is the user's error
    out.pinned = true;
    out.search = search_plans(model, cluster, workload, placed, options);
    out.steps.push_back(step_of(pinned, out.search));
    return out;
  }
  out.search = search_plans(model, cluster, workload, fix, options);
  out.steps.push_back(step_of(StatePlacement{}, out.search));
  if (!out.search.plans.empty()) return out;
  bool fitted = false;
  for (const StatePlacement& placement : offload_ladder(fix.defaults.framework)) {
    const PlanConstraints placed = with_placement(fix, placement);
    if (!runnable(placed, cluster)) continue;
    const PlanSearch step = search_plans(model, cluster, workload, placed, options);
    out.steps.push_back(step_of(placement, step));
    merge_into(out.search, step, options.top_k);
    const double lean = step.min_peak_memory_bytes;  // 0: no plan of the step fits the host and NVMe
    if (lean > 0 && (out.search.min_peak_memory_bytes == 0 || lean < out.search.min_peak_memory_bytes))
      out.search.min_peak_memory_bytes = lean;
    if (fitted) break;
    fitted = !step.plans.empty();
  }
  return out;
}

}  // namespace tessera
