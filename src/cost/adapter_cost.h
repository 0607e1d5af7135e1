// What LoRA / QLoRA (plan/fine_tuning.h) change in a layer's time:
// - the frozen weights need no weight-gradient GEMM: a linear layer's backward is its input
//   gradient alone, one forward's worth instead of two (Hu et al. 2021 §4.2: LoRA's training
//   speed-up comes from not computing the frozen weights' gradients);
// - each targeted matrix adds two skinny GEMMs forward (x A^T, then (x A^T) B^T) and their input
//   and weight gradients backward, and PEFT's scaled add (peft/tuners/lora/layer.py Linear.forward:
//   lora_B(lora_A(dropout(x))) * scaling added to the base output): 4 operators per target;
// - QLoRA dequantizes each NF4 weight to bf16 before every matmul that reads it (forward, the
//   backward's input gradient, a recomputed forward): read 4.127 bits, write 16 per parameter,
//   memory-bound (bitsandbytes dequantize_4bit; Dettmers et al. 2023 §3).
#pragma once

#include "cost/layer_cost.h"
#include "model/flops.h"

namespace tessera {

// Backward of a frozen linear layer over its forward: the input-gradient GEMM only.
inline constexpr double kFrozenGemmBackwardOverForward = 1.0;
// PEFT operators per targeted matrix in the forward (lora_A, lora_B, the scaling, the add).
inline constexpr double kAdapterHostOpsPerTarget = 4.0;

struct AdapterLayerCost {
  double fwd_s = 0;      // adapter GEMMs forward
  double bwd_s = 0;      // their input and weight gradients
  double dequant_s = 0;  // QLoRA: one pass of dequantizing the layer's linear weights
  double host_ops = 0;   // extra eager operators in the forward
};

// Zero for a plan without adapters. `moe`: the layer's MLP is routed experts (no adapters there).
AdapterLayerCost adapter_layer_cost(const LayerContext& context, bool moe);

// An iteration's FLOPs under LoRA: the frozen linear layers' weight-gradient GEMMs (2 FLOPs per
// weight and token, of the 4 a backward does) are not run; the adapters train at 6 FLOPs per
// parameter and token.
IterationFlops adapter_iteration_flops(IterationFlops flops, const ModelSpec& model, const FineTuning& tuning,
                                       double tokens, std::int64_t seq);

}  // namespace tessera
