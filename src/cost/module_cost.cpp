#include "cost/module_cost.h"

#include <algorithm>
#include <cmath>

#include "cost/activation_memory.h"
#include "cost/collective_cost.h"
#include "cost/compute_cost.h"
#include "cost/layer_cost.h"
#include "cost/memory_model.h"
#include "core/units.h"

namespace tessera {

namespace {
}  // namespace

ModulePass module_pass_time(const ModuleSpec& module, const Cluster& cluster, const ModulePlan& plan,
                            const ModuleLoad& load) {
  ModulePass pass;
  if (load.tokens <= 0) return pass;
  const ModelSpec& t = module.transformer;
  if (module.role == ModuleRole::projector) {
    // A replicated MLP, layer by layer.
    const std::vector<std::int64_t> widths = projector_widths(module);
    double fwd = 0;
    for (std::size_t i = 0; i + 1 < widths.size(); ++i)
      fwd += gemm_time_s(load.tokens, static_cast<double>(widths[i + 1]), static_cast<double>(widths[i]), 1.0, cluster.gpu, false);
    pass.fwd_s = pass.gpu_fwd_s = fwd;
    if (module.trainable) pass.bwd_s = kGemmBackwardOverForward * fwd + (plan.recompute == Recompute::full ? fwd : 0.0);
    pass.gpu_bwd_s = pass.bwd_s;
    return pass;
  }
  Plan p;
  p.tp = plan.tp;
  p.recompute = plan.recompute;
  p.flash_attention = true;
  p.sequence_parallel = false;
  // The mean length over which a token attends: sum of squared item lengths / tokens.
  const auto span = std::max<std::int64_t>(1, std::llround(load.tokens_squared / load.tokens));
  const LayerContext x = make_layer_context(t, cluster, p, span, load.tokens, /*causal=*/false);
  const LayerCost layer = layer_cost(x, false, plan.recompute);
  const double layers = static_cast<double>(t.layers);
  // Communication splits between forward and backward by the compute ratio (as cost_model does).
  const double compute = layer.fwd_s + layer.bwd_s + layer.recompute_s;
  const double fwd_share = compute > 0 ? layer.fwd_s / compute : 0.5;
  pass.fwd_s = layers * (layer.fwd_s + layer.comm_s * fwd_share);
  pass.gpu_fwd_s = layers * (layer.gpu_fwd_s + layer.comm_s * fwd_share);
  pass.host_fwd_s = layers * layer.host_fwd_s;
  // A frozen module needs no backward (it is the first of the chain: no input gradient either).
  if (module.trainable) {
    const double recompute_gpu = plan.recompute == Recompute::full ? layer.gpu_fwd_s : 0.0;
    pass.bwd_s = layers * (layer.bwd_s + layer.recompute_s + layer.comm_s * (1.0 - fwd_share));
    pass.gpu_bwd_s = layers * (layer.gpu_bwd_s + recompute_gpu + layer.comm_s * (1.0 - fwd_share));
    pass.host_bwd_s = layers * (layer.host_bwd_s + (plan.recompute == Recompute::full ? layer.host_fwd_s : 0.0));
  }
  return pass;
}


namespace {
// The modelled reserve only; module_memory adds the GPU's measured reserve.
MemoryBreakdown modelled_module_memory(const ModuleSpec& module, const ModulePlan& plan, const ModuleLoad& inflight) {
  MemoryBreakdown mem;
  const double tp = static_cast<double>(module.role == ModuleRole::projector ? 1 : plan.tp);
  const double params = module_parameters(module) / tp;
  mem.weights_bytes = kWeightBytesPerParam * params;
  mem.framework_bytes = kFrameworkOverheadBytes;
  if (!module.trainable) return mem;
  mem.gradients_bytes = kGradBytesPerParam * params;
  mem.optimizer_bytes = kOptimizerBytesPerParam * params / static_cast<double>(plan.dp);
  if (inflight.tokens <= 0) return mem;
  if (module.role == ModuleRole::projector) {
    // Each layer's input, and the pre-activation of the hidden ones, 16-bit.
    const std::vector<std::int64_t> widths = projector_widths(module);
    double per_token = 0;
    for (std::size_t i = 0; i + 1 < widths.size(); ++i) per_token += static_cast<double>(widths[i]) * (i == 0 ? 1.0 : 2.0);
    mem.activations_bytes = units::kBytesBf16 * inflight.tokens * per_token;
    return mem;
  }
  const ModelSpec& t = module.transformer;
  ActivationShape shape;
  shape.seq = inflight.tokens;
  shape.micro_batch = 1.0;
  shape.tp = plan.tp;
  shape.sequence_parallel = false;
  shape.flash_attention = true;
  shape.recompute = plan.recompute;
  mem.activations_bytes = static_cast<double>(t.layers) * layer_activation_bytes(t, shape, false);
  return mem;
}
}  // namespace

MemoryBreakdown module_memory(const ModuleSpec& module, const ModulePlan& plan, const ModuleLoad& inflight,
                              const GpuSpec& gpu) {
  MemoryBreakdown mem = modelled_module_memory(module, plan, inflight);
  mem.framework_bytes += measured_reserve_bytes(gpu);
  return mem;
}

double module_grad_sync_s(const ModuleSpec& module, const Cluster& cluster, const ModulePlan& plan) {
  if (plan.dp <= 1 || !module.trainable) return 0.0;
  const double tp = static_cast<double>(module.role == ModuleRole::projector ? 1 : plan.tp);
  const double params = module_parameters(module) / tp;
  const GroupLink link = group_link(cluster, plan.tp, plan.dp);
  return reduce_scatter_time_s(kGradBytesPerParam * params, plan.dp, link) +
         all_gather_time_s(kWeightBytesPerParam * params, plan.dp, link);
}

}  // namespace tessera
