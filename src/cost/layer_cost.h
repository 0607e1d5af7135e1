// The time of one transformer layer on one GPU for one micro-batch: GEMMs, attention core,
// memory-bound work, host dispatch, and its tensor / context / expert-parallel communication.
// The cost model sums these per pipeline stage; multimodal modules (ViT encoders, DiT generators)
// use them with bidirectional attention over each image's patches.
#pragma once

#include <cstdint>

#include "cost/collective_cost.h"
#include "hardware/cluster.h"
#include "model/flops.h"
#include "model/model_spec.h"
#include "plan/plan.h"

namespace tessera {

struct LayerCost {
  double fwd_s = 0;        // forward compute of one micro-batch
  double bwd_s = 0;        // backward compute (without recompute)
  // The GPU's own work in fwd_s / bwd_s (they are at least the host's dispatch time): a caller
  // that runs this layer while the host is ahead on other work pays only this.
  double gpu_fwd_s = 0, gpu_bwd_s = 0;
  // The host's dispatch time of the layer's operators, forward and backward.
  double host_fwd_s = 0, host_bwd_s = 0;
  double recompute_s = 0;  // forward work re-run in backward
  double comm_s = 0;       // exposed TP + CP + EP communication, forward + backward (+ recompute)
  double tp_s = 0, cp_s = 0, ep_s = 0;
  double ep_total_s = 0;   // the expert all-to-all before EP overlap hides any of it (ep_s is what is left)
};

struct LayerContext {
  const ModelSpec& m;
  const Cluster& c;
  const Plan& p;
  std::int64_t seq_len;  // tokens each query may attend over (the sequence, or one image's patches)
  bool causal;           // causal mask (decoders) or full bidirectional attention (ViT, DiT)
  bool fp8;
  double tokens;        // tokens of one micro-batch on one GPU before the TP split (mb * s / cp)
  double tp;
  GroupLink tp_link, cp_link;
};

// The context of a layer under `plan` on `cluster`: `tokens` per micro-batch on one GPU before the
// TP split (mb * s / cp for a decoder), attention over `seq_len` keys, causal or not.
LayerContext make_layer_context(const ModelSpec& model, const Cluster& cluster, const Plan& plan,
                                std::int64_t seq_len, double tokens, bool causal);

// Bytes moved per element to cast a 16-bit GEMM input to FP8 with Transformer Engine under the
// plan's recipe: read 2, write 1 and the transposed copy for the weight-gradient GEMM (fused
// cast-transpose), and for block-scaled recipes (blockwise, mxfp8) one more pass for the scales.
double fp8_cast_bytes_per_element(Fp8Recipe recipe);

// `moe`: the layer's MLP is the routed-expert MLP. `recompute` decides what backward re-runs.
LayerCost layer_cost(const LayerContext& context, bool moe, Recompute recompute);

}  // namespace tessera
