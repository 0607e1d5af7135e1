#include "cost/moe_layer_cost.h"

#include <algorithm>

#include "cost/collective_cost.h"
#include "cost/compute_cost.h"
#include "cost/expert_load.h"
#include "core/units.h"

namespace tessera {

namespace {

// Router work beyond its GEMM, per token and expert, in fp32 elements read or written: logits
// upcast, score function, top-k selection, the probabilities' scatter into the routing map, and
// the aux-loss statistics (router.py: TopKRouter.routing, moe_utils.topk_softmax_with_capacity).
constexpr double kRouterPassesPerScore = 8.0;
// Group-limited routing (DeepSeek-V3) adds group scores, a group top-k and a mask pass.
constexpr double kGroupRoutingExtraPasses = 3.0;
// Permutation: gather the routed copies (read h, write k h per token), and the reverse with the
// probability weighting on the way back (moe_utils.permute / unpermute).
constexpr double kPermuteCopies = 2.0;
// Host operators of one MoE block's forward, read off Megatron-Core's forward path (d98e8a64):
// router (GEMM, score function, top-k, probabilities, routing map, aux loss and its logging),
// dispatcher preprocessing (token counts per expert and rank, splits), permutation, the
// collectives, the per-local-expert sort, the experts (grouped GEMMs, activation), and the
// reverse path. Counted with unfused permutation; each FP8 grouped GEMM adds amax, scale update,
// a multi-tensor quantise of every local expert's slice and its transpose (TE GroupedLinear).
constexpr double kRouterHostOps = 25.0;
constexpr double kDispatcherHostOps = 60.0;
constexpr double kExpertsHostOps = 10.0;
constexpr double kFp8HostOpsPerGroupedGemm = 4.0;
constexpr double kExpertGemmsPerExpert = 2.0;  // fc1 (gate and up fused) and fc2

// Routing and permutation kernels (scores, top-k, the gathers and scatters of routed copies) are
// memory-bound; the GPU's moe_dispatch_efficiency scales their speed relative to the model
// (fused or unfused permutation, a framework's own kernels), nothing else.
double routing_memory_time_s(double bytes, const GpuSpec& gpu) {
  return memory_bound_time_s(bytes, gpu) / gpu.moe_dispatch_efficiency;
}

// One dispatch of the plan's dispatcher: this rank sends its `tokens` (`token_bytes` each) to
// their top-k experts, the busiest rank receiving `load` x the mean.
double dispatch_time_s(const LayerContext& x, double tokens, double token_bytes, double load) {
  const Plan& p = x.p;
  const std::int64_t k = x.m.moe.top_k;
  const std::int64_t stride = p.expert_tp();
  switch (p.dispatcher) {
    case MoeDispatcher::alltoall:
      return expert_all_to_all_time_s(tokens * static_cast<double>(k) * token_bytes * load, p.ep, stride, x.c);
    case MoeDispatcher::flex:
      return deduplicated_dispatch_time_s(token_bytes * load, tokens, k, p.ep, stride, x.c,
                                          {x.m.moe.groups, x.m.moe.topk_groups});
    case MoeDispatcher::allgather: {
      // Every token to every member of the ep x etp group (token_dispatcher.py, MoEAllGather).
      const std::int64_t members = p.ep * p.expert_tp();
      const GroupLink link = group_link(x.c, 1, members);
      return all_gather_time_s(tokens * token_bytes * static_cast<double>(members), members, link);
    }
  }
  return 0.0;
}

}  // namespace

MoeBlockCost moe_block_cost(const LayerContext& x) {
  const ModelSpec& m = x.m;
  const Plan& p = x.p;
  MoeBlockCost c;
  const double h = static_cast<double>(m.hidden);
  const double experts = static_cast<double>(m.moe.experts);
  const double k = static_cast<double>(m.moe.top_k);
  const double f = static_cast<double>(m.moe.expert_ffn_hidden);
  const double etp = static_cast<double>(p.expert_tp());
  const double ep = static_cast<double>(p.ep);
  const double gate = m.mlp == MlpType::swiglu ? 2.0 : 1.0;
  const double load = expert_load_factor(p);
  // Tokens this rank routes: its sequence-parallel shard (all of them without tensor parallelism).
  const double tokens = p.sequence_parallel ? x.tokens / x.tp : x.tokens;

  // Router: a 16-bit GEMM to expert logits (Megatron keeps it out of FP8), then fp32 scoring.
  c.router_s = gemm_time_s(tokens, experts, h, 1.0, x.c.gpu, false);
  const double passes = kRouterPassesPerScore + (m.moe.groups > 0 ? kGroupRoutingExtraPasses : 0.0);
  const GpuSpec& gpu = x.c.gpu;
  c.router_s += routing_memory_time_s(units::kBytesFp32 * passes * tokens * experts, gpu) + gpu.kernel_overhead_s * passes;

  // Permute the k routed copies out and back (capacity padding moves the padded rows too).
  c.permute_s = routing_memory_time_s(kPermuteCopies * units::kBytesBf16 * tokens * h * (1.0 + k * load), gpu);

  // Experts: this etp group's local experts see etp x tokens x k x load routed copies in all,
  // each GPU computing 1/etp of every expert's width (moe/experts.py, TEGroupedMLP).
  const double local_experts = experts / ep;
  const double copies = etp * tokens * k * load;
  const double per_expert = copies / local_experts;
  c.expert_gemm_s = grouped_gemm_time_s(per_expert, gate * f / etp, h, local_experts, x.c.gpu, x.fp8) +
                    grouped_gemm_time_s(per_expert, h, f / etp, local_experts, x.c.gpu, x.fp8);
  const double act_passes = m.mlp == MlpType::swiglu ? 3.0 : 2.0;
  c.expert_act_s = memory_bound_time_s(units::kBytesBf16 * act_passes * copies * f / etp, x.c.gpu);
  if (x.fp8) {
    const double cast = fp8_cast_bytes_per_element(p.fp8_recipe);
    c.fp8_cast_s = memory_bound_time_s(cast * copies * (h + f / etp), x.c.gpu) +
                   gpu.kernel_overhead_s * kExpertGemmsPerExpert * local_experts;
  }
  if (m.moe.shared_experts > 0) {
    // A dense MLP over the layer's tokens, split by tp (moe/shared_experts.py).
    const double fs = f * static_cast<double>(m.moe.shared_experts);
    c.shared_gemm_s = gemm_time_s(x.tokens, gate * fs / x.tp, h, 1.0, x.c.gpu, x.fp8) +
                      gemm_time_s(x.tokens, h, fs / x.tp, 1.0, x.c.gpu, x.fp8) +
                      memory_bound_time_s(units::kBytesBf16 * act_passes * x.tokens * fs / x.tp, x.c.gpu);
  }

  // Dispatch (and, by the same route back, combine) in 16-bit.
  c.dispatch_s = dispatch_time_s(x, tokens, units::kBytesBf16 * h, load);
  if (p.expert_tp() > 1) {
    // Routed tokens gathered over the etp group before fc1, reduce-scattered after fc2.
    const GroupLink link = group_link(x.c, 1, p.expert_tp());
    const double gathered = units::kBytesBf16 * copies * h;
    c.etp_comm_s = all_gather_time_s(gathered, p.expert_tp(), link) +
                   reduce_scatter_time_s(gathered, p.expert_tp(), link);
  }

  c.host_ops = kRouterHostOps + kDispatcherHostOps + kExpertsHostOps;
  if (x.fp8) c.host_ops += kFp8HostOpsPerGroupedGemm * kExpertGemmsPerExpert;
  // The dispatcher needs the token counts on the host before its collective or to size buffers
  // (token_dispatcher.py: cuda_sync_point "before_ep_alltoall" / "before_finish").
  c.host_sync = p.ep > 1 || p.tp > 1;
  return c;
}

}  // namespace tessera
