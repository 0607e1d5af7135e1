// The MoE block of one transformer layer for one micro-batch on one GPU, as Megatron-Core runs it
// (megatron/core/transformer/moe/{moe_layer,router,token_dispatcher,experts}.py, Megatron-LM main
// d98e8a64): the router, token permutation, the dispatch to expert-parallel ranks, the experts'
// grouped GEMMs (with expert tensor parallelism), the combine, and the shared experts.
//
// Tokens: with tensor parallelism Megatron-Core requires sequence parallelism for MoE, so each of
// the tp ranks routes its own 1/tp of the micro-batch's tokens. The busiest expert-parallel rank
// receives expert_load_factor(plan) x the mean (cost/expert_load.h), and every rank waits for it.
#pragma once

#include "cost/layer_cost.h"

namespace tessera {

// Forward times of the block's parts (backward is derived in layer_cost).
struct MoeBlockCost {
  double router_s = 0;       // router GEMM (16-bit), scores, top-k, aux loss
  double permute_s = 0;      // permute before dispatch + unpermute after combine (memory-bound)
  double expert_gemm_s = 0;  // routed experts' fc1 + fc2 grouped GEMMs
  double expert_act_s = 0;   // the experts' activation function (memory-bound)
  double fp8_cast_s = 0;     // FP8 quantisation of the experts' GEMM inputs
  double shared_gemm_s = 0;  // shared experts' GEMMs + activation
  double dispatch_s = 0;     // one dispatch (all-to-all, all-gather or deduplicated); the
                             // combine returns the experts' outputs by the same route and costs the same
  double etp_comm_s = 0;     // all-gather + reduce-scatter of routed tokens over the etp group
  double host_ops = 0;       // operators the host dispatches in the forward of the block
  bool host_sync = false;    // the forward waits for routing counts on the host (D2H sync)
  // The block's GPU work in forward, excluding communication.
  double compute_s() const {
    return router_s + permute_s + expert_gemm_s + expert_act_s + fp8_cast_s + shared_gemm_s;
  }
  double comm_s() const { return 2.0 * dispatch_s + etp_comm_s; }
};

MoeBlockCost moe_block_cost(const LayerContext& context);

}  // namespace tessera
